import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, selectColumn, selectRows } from '../../helpers/store-rows.js';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { saveCredentials } from '../../../src/simulator/credentials.js';
import type { SimulationSummary } from '../../../src/simulator/run.js';

// `scanhub simulate` as a process against a real server: provisioning through the API with a
// certificate request of its own key, mqtts with it, and the events in the database afterwards. Needs `npx tsc -p .` first.

let t: TestServer;
let config: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await startTestServer();
  config = mkdtempSync(join(tmpdir(), 'scanhub-sim-config-'));
  env = adminEnv(t, { XDG_CONFIG_HOME: config });
});
afterAll(async () => {
  await t.close();
  rmSync(config, { recursive: true, force: true });
});

type Summary = SimulationSummary;

const storedEvents = (gatewayId: string) => countRows(t, 'events', 'gateway_id = ?', gatewayId);

describe('scanhub simulate', () => {
  let first: Summary;

  it('creates and provisions the gateways, publishes, and every message sent is acknowledged and stored', async () => {
    const args = ['simulate', '--gateways', '2', '--rate', '10', '--duration', '2s', '--job-start', 'JOB-', '--job-end', 'END-', '--json'];
    const result = await runCli(args, { env });
    expect(result.stderr).toContain('Provisioned gateway sim-1');
    expect(result.code).toBe(0);
    first = JSON.parse(result.stdout) as Summary;
    expect(first.gateways.map((g) => g.name)).toEqual(['sim-1', 'sim-2']);
    expect(first.messages_acknowledged).toBe(first.messages_sent);
    expect(first.messages_failed).toBe(0);
    expect(first.gateway_reports).toBe(2);
    expect(first.messages_sent).toBe(first.events_sent + first.gateway_reports);
    expect(first.scans + first.telemetry).toBe(first.events_sent);
    // 10 events/s for 2 s from each gateway: 21 due (the first at once), plus the end of an open job.
    expect(first.events_sent).toBeGreaterThanOrEqual(2 * 21);
    const ids = first.gateways.map((g) => g.id);
    let stored = 0;
    for (const id of ids) stored += await storedEvents(id);
    expect(stored).toBe(first.events_sent);
    expect(await selectRows(t, `SELECT DISTINCT model, manufacturer FROM gateways WHERE id IN (?, ?)`, ...ids)).toEqual([
      { model: 'SIM-GW-100', manufacturer: 'scanhub simulator' },
    ]);

    // The certificates are kept per deployment, readable by the owner only.
    const [deployment] = readdirSync(join(config, 'scanhub', 'simulator'));
    const files = readdirSync(join(config, 'scanhub', 'simulator', deployment!)).sort();
    expect(files).toEqual(ids.map((id) => `${id}.json`).sort());
    for (const file of files) expect(statSync(join(config, 'scanhub', 'simulator', deployment!, file)).mode & 0o777).toBe(0o600);
  });

  it('provisions by certificate request: the key it made is only in its credentials, the certificate is of that key, no PKCS#12 kept', async () => {
    const [deployment] = readdirSync(join(config, 'scanhub', 'simulator'));
    const audit = await t.admin.get<{ items: { target?: { id: string }; details: { key?: string; certificate_serial: string } }[] }>(`/${CUSTOMER}/audit-log?action=gateway.provisioned`);
    for (const { id } of first.gateways) {
      const credentials = JSON.parse(readFileSync(join(config, 'scanhub', 'simulator', deployment!, `${id}.json`), 'utf8')) as Record<string, string>;
      expect(Object.keys(credentials).sort()).toEqual(['ca_certificate', 'certificate', 'certificate_common_name', 'gateway_id', 'key', 'mqtt_endpoint', 'mqtt_topic_prefix']);
      const certificate = new X509Certificate(credentials.certificate!);
      expect({ subject: certificate.subject, ownKey: certificate.checkPrivateKey(createPrivateKey(credentials.key!)), ca: credentials.ca_certificate }).toEqual({
        subject: `CN=${id}`,
        ownKey: true,
        ca: t.server.ctx.ca.certPem,
      });
      const redeemed = audit.items.filter((item) => item.target?.id === id).map((item) => item.details);
      expect(redeemed).toMatchObject([{ key: 'device', certificate_serial: certificate.serialNumber.toLowerCase() }]);
      expect(await t.admin.get(`/${CUSTOMER}/gateways/${id}/certificate`)).toMatchObject({ serial: certificate.serialNumber.toLowerCase(), status: 'active' });
    }
  });

  it('still runs with the PKCS#12 credentials an earlier version saved', async () => {
    const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'saved-1', usecase: 'picking', station: 'A' });
    const { token } = await t.admin.post<{ token: string }>(`/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`);
    const provisioned = await t.anonymous.post<{ mqtt_endpoint: string; mqtt_topic_prefix: string; certificate_common_name: string; pkcs12: string }>('/provisioning', { token });
    const { mqtt_endpoint, mqtt_topic_prefix, certificate_common_name, pkcs12 } = provisioned;
    saveCredentials(t.url, { gateway_id: gateway.id, mqtt_endpoint, mqtt_topic_prefix, certificate_common_name, pkcs12 }, { XDG_CONFIG_HOME: config });
    const result = await runCli(['simulate', '--prefix', 'saved', '--gateways', '1', '--rate', '5', '--duration', '1s', '--json'], { env });
    expect({ code: result.code, provisioned: result.stderr.includes('Provisioned') }).toEqual({ code: 0, provisioned: false });
    const summary = JSON.parse(result.stdout) as Summary;
    expect(summary.messages_acknowledged).toBe(summary.messages_sent);
    expect(await storedEvents(gateway.id)).toBe(summary.events_sent);
  });

  it('mixes complete jobs into the scans: start, items, end, in created order per gateway', async () => {
    let jobs = 0;
    for (const { id } of first.gateways) {
      const codes = (await selectColumn(t, `SELECT scan_code FROM events WHERE gateway_id = ? AND type = 'scan' ORDER BY created, id`, id)) as string[];
      const marks = codes.filter((code) => /^(JOB|END)-/.test(code));
      // Strictly alternating JOB-n, END-n with the same n, ending with an END.
      marks.forEach((code, i) => expect(code).toBe(`${i % 2 ? 'END' : 'JOB'}-${Math.floor(i / 2) + 1}`));
      expect(marks.length % 2).toBe(0);
      jobs += marks.length / 2;
    }
    expect(jobs).toBe(first.jobs);
    expect(jobs).toBeGreaterThanOrEqual(2);
  });

  it('reuses the gateways and their stored certificates on a second run', async () => {
    const result = await runCli(['simulate', '--gateways', '2', '--rate', '5', '--duration', '1s', '--json'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('Provisioned');
    expect(result.stderr).not.toContain('Created');
    const second = JSON.parse(result.stdout) as Summary;
    expect(second.gateways).toEqual(first.gateways);
    expect(second.messages_acknowledged).toBe(second.messages_sent);
    let total = 0;
    for (const g of first.gateways) total += await storedEvents(g.id);
    expect(total).toBe(first.events_sent + second.events_sent);
  });

  it('a revoked certificate is an error naming --reprovision; with it the same gateway gets a new certificate and its events arrive', async () => {
    const { id } = first.gateways[0]!;
    const revoked = await t.admin.post<{ serial: string }>(`/${CUSTOMER}/gateways/${id}/revoke-certificate`);
    const refused = await runCli(['simulate', '--gateways', '1', '--duration', '1s'], { env });
    expect({ code: refused.code, stderr: refused.stderr, stdout: refused.stdout }).toEqual({
      code: 1,
      stderr: `scanhub: the certificate this simulator holds for gateway sim-1 (${id}) was revoked, so the broker refuses it: run again with --reprovision to give the simulated device a new one\n`,
      stdout: '',
    });
    const before = await storedEvents(id);
    const again = await runCli(['simulate', '--gateways', '1', '--rate', '5', '--duration', '1s', '--reprovision', '--json'], { env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Re-provisioned gateway sim-1 (its certificate was revoked)');
    const summary = JSON.parse(again.stdout) as Summary;
    expect({ gateways: summary.gateways, acknowledged: summary.messages_acknowledged }).toEqual({ gateways: [{ id, name: 'sim-1' }], acknowledged: summary.messages_sent });
    expect(await storedEvents(id)).toBe(before + summary.events_sent);
    const current = await t.admin.get<{ serial: string; status: string }>(`/${CUSTOMER}/gateways/${id}/certificate`);
    expect(current.status).toBe('active');
    expect(current.serial).not.toBe(revoked.serial);
  });

  it('takes over a gateway provisioned elsewhere with --reprovision', async () => {
    const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'taken-1', usecase: 'picking', station: 'A' });
    await t.admin.post(`/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`);
    const result = await runCli(['simulate', '--prefix', 'taken', '--gateways', '1', '--rate', '5', '--duration', '1s', '--reprovision', '--json'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Re-provisioned gateway taken-1;');
    expect(await storedEvents(gateway.id)).toBe((JSON.parse(result.stdout) as Summary).events_sent);
  });

  it('explains that a gateway provisioned elsewhere cannot be simulated', async () => {
    const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'field-1', usecase: 'picking', station: 'A' });
    await t.admin.post(`/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`);
    const result = await runCli(['simulate', '--prefix', 'field', '--gateways', '1', '--duration', '1s'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`scanhub: gateway field-1 (${gateway.id}) was provisioned before, but not by this simulator on this machine`);
    expect(result.stdout).toBe('');
  });

  it('--backdate stamps the events that long before they are sent', async () => {
    const sent = Date.now();
    const result = await runCli(['simulate', '--gateways', '1', '--prefix', 'offline', '--rate', '10', '--duration', '1s', '--backdate', '3d', '--json'], { env });
    expect(result.code).toBe(0);
    const [gateway] = (JSON.parse(result.stdout) as Summary).gateways;
    const created = (await selectColumn(t, 'SELECT created FROM events WHERE gateway_id = ?', gateway!.id)) as number[];
    expect(created.length).toBeGreaterThanOrEqual(11);
    const threeDays = 3 * 86_400_000;
    for (const at of created) expect(at).toBeGreaterThanOrEqual(sent - threeDays);
    for (const at of created) expect(at).toBeLessThan(Date.now() - threeDays);
  });

  it('refuses bad flags with exit code 2', async () => {
    expect(await runCli(['simulate', '--rate', 'fast'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('"fast" is not a rate') });
    expect(await runCli(['simulate', '--duration', '5 minutes'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('is not a duration') });
    // One duration grammar in the CLI: a bare number has no unit, here as everywhere else.
    expect(await runCli(['simulate', '--duration', '30'], { env })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('"30" is not a duration: use a number and a unit, e.g. 30s, 30m, 2h, 7d or 2w'),
    });
    expect(await runCli(['simulate', '--duration', '25h'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('"25h" is not a duration above 0 and at most 24h.') });
    expect(await runCli(['simulate', '--job-start', 'JOB-'], { env })).toMatchObject({ code: 2, stderr: 'scanhub: --job-start and --job-end go together\n' });
    expect(await runCli(['simulate', '--backdate', '400d'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('"400d" is more than 366d.') });
    expect(await runCli(['simulate', '--backdate', 'yesterday'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('"yesterday" is not a duration') });
  });
});
