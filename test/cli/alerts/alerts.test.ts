// `scanhub alerts list|rules create|rules list|rules delete` as processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { insertGateway, selectRows } from '../../helpers/store-rows.js';
import { until } from '../../helpers/until.js';

let t: TestServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestServer({ alertIntervalMs: 50 });
  env = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken };
});
afterAll(async () => {
  await t?.close();
});

describe('scanhub alerts', () => {
  it('rules create --after 60s, alerts list --state OPEN shows the offline gateway, rules delete', async () => {
    const dock = await insertGateway(t, CUSTOMER, 'dock-9');
    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', Date.now() - 120_000, dock);
    const created = await runCli(['alerts', 'rules', 'create', '--kind', 'gateway_offline', '--after', '60s', '--json'], { env });
    expect(created.code).toBe(0);
    const rule = JSON.parse(created.stdout) as { rule_id: string };
    expect(rule).toEqual({ rule_id: expect.any(String), kind: 'gateway_offline', after_seconds: 60, created: expect.any(Number) });

    const open = await until(
      async () => JSON.parse((await runCli(['alerts', 'list', '--state', 'OPEN', '--json'], { env })).stdout) as { subject: object; kind: string }[],
      (list) => list.length === 1,
    );
    expect(open[0]).toMatchObject({ kind: 'gateway_offline', subject: { type: 'gateway', id: dock } });
    const table = await runCli(['alerts', 'list'], { env });
    expect(table.stdout).toMatch(new RegExp(`^[0-9a-f-]{36}\\tgateway_offline\\tgateway dock-9\\tOPEN\\t`, 'm'));

    expect((await runCli(['alerts', 'rules', 'list'], { env })).stdout).toMatch(new RegExp(`^${rule.rule_id}\\tgateway_offline\\tafter 60s\\t`, 'm'));
    expect(await runCli(['alerts', 'rules', 'delete', rule.rule_id], { env })).toEqual({ code: 0, stdout: '', stderr: `Deleted alert rule ${rule.rule_id}.\n` });
    expect(JSON.parse((await runCli(['alerts', 'rules', 'list', '--json'], { env })).stdout)).toEqual([]);
  });

  it('rules create --kind job_open_too_long --job-config NAME --after 30m and --kind station_silent --gateway NAME --after 5m; a name that is none, and a missing parameter, refused', async () => {
    const dock = await insertGateway(t, CUSTOMER, 'dock-10');
    const config = await t.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, { job_name: 'picking', start_barcode: 'S', end_barcode: 'E', gateway_ids: [dock] });
    const job = await runCli(['alerts', 'rules', 'create', '--kind', 'job_open_too_long', '--job-config', 'picking', '--after', '30m', '--json'], { env });
    expect(job.code).toBe(0);
    expect(JSON.parse(job.stdout)).toEqual({ rule_id: expect.any(String), kind: 'job_open_too_long', job_config_id: config.job_config_id, after_seconds: 1800, created: expect.any(Number) });
    const silent = await runCli(['alerts', 'rules', 'create', '--kind', 'station_silent', '--gateway', 'dock-10', '--after', '5m', '--json'], { env });
    expect(JSON.parse(silent.stdout)).toEqual({ rule_id: expect.any(String), kind: 'station_silent', gateway_ids: [dock], after_seconds: 300, created: expect.any(Number) });
    expect((await runCli(['alerts', 'rules', 'list'], { env })).stdout).toMatch(new RegExp(`\\tjob_open_too_long\\tjob config ${config.job_config_id}, after 1800s\\t`));

    const unknown = await runCli(['alerts', 'rules', 'create', '--kind', 'job_open_too_long', '--job-config', 'packing', '--after', '30m'], { env });
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'scanhub: no job configuration is named "packing": see `scanhub jobs list`\n' });
    const missing = await runCli(['alerts', 'rules', 'create', '--kind', 'station_silent', '--after', '5m'], { env });
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'scanhub: bad request: Body field "gateway_ids" is required for a station_silent rule (it takes gateway_ids, after_seconds)\n' });
  });
});
