import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

// `scanhub gateways certificate|revoke|reprovision` run as processes (no TTY), as a script runs them.

let t: TestServer;
let env: NodeJS.ProcessEnv;
let id: string;
beforeAll(async () => {
  t = await startTestServer();
  env = adminEnv(t);
  id = (await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'Dock 7', usecase: 'inbound', station: 'dock-7' })).id;
});
afterAll(() => t?.close());

const cli = (args: string[]) => runCli(args, { env });
type Certificate = { serial: string; not_before: number; not_after: number; status: string };

/** `field<TAB>value` lines of piped output into an object. */
function fieldsOf(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.trimEnd().split('\n').map((line) => line.split('\t') as [string, string]));
}

describe('scanhub gateways certificate|revoke|reprovision', () => {
  it('certificate of a gateway never prepared says so in one line (exit 1)', async () => {
    expect(await cli(['gateways', 'certificate', 'Dock 7'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: not found: Gateway "${id}" has no certificate: it was never prepared for provisioning (prepare-provisioning, or \`scanhub gateways provision\`)\n`,
    });
  });

  it('certificate by name prints serial, status and validity; --json prints the API object', async () => {
    const { token } = await t.admin.post<{ token: string }>(`/${CUSTOMER}/gateways/${id}/prepare-provisioning`);
    const { pkcs12 } = await t.anonymous.post<{ pkcs12: string }>('/provisioning', { token });
    expect(pkcs12.length).toBeGreaterThan(0);
    const api = await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`);
    const json = await cli(['--json', 'gateways', 'certificate', 'Dock 7']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(api);
    const plain = await cli(['gateways', 'certificate', id]);
    expect(plain).toEqual({ code: 0, stdout: plain.stdout, stderr: '' });
    expect(fieldsOf(plain.stdout)).toEqual({
      serial: api.serial,
      status: 'active',
      not_before: new Date(api.not_before).toISOString(),
      not_after: new Date(api.not_after).toISOString(),
    });
  });

  it('reprovision prints URL and token like provision (no QR code when piped) and the token works once', async () => {
    const before = await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`);
    const result = await cli(['gateways', 'reprovision', 'Dock 7']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`registration_url\t${t.url}/provisioning`);
    expect(lines[1]).toMatch(/^token\t[A-Za-z0-9_-]{43}$/);
    expect(result.stderr).toBe(
      `Gateway Dock 7 (${id.slice(0, 8)}) is re-provisioned: the device sends the token to ${t.url}/provisioning within 24 hours; its previous certificate works until then.\n`,
    );
    const token = lines[1]!.split('\t')[1]!;
    expect((await call(t.url, 'POST', '/provisioning', { json: { token } })).status).toBe(200);
    expect((await call(t.url, 'POST', '/provisioning', { json: { token } })).status).toBe(403);
    const after = await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`);
    expect(after.status).toBe('active');
    expect(after.serial).not.toBe(before.serial);
  });

  it('reprovision --json prints the API object; --qr adds the QR code', async () => {
    const json = await cli(['--json', 'gateways', 'reprovision', id]);
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout) as { registration_path: string; token: string; registration_url: string };
    expect(answer).toEqual({ registration_path: '/provisioning', token: answer.token, registration_url: `${t.url}/provisioning` });
    const qr = await cli(['gateways', 'reprovision', id, '--qr']);
    expect(qr.code).toBe(0);
    const [url, token, ...code] = qr.stdout.trimEnd().split('\n');
    expect(url).toBe(`registration_url\t${t.url}/provisioning`);
    expect(token).toMatch(/^token\t[A-Za-z0-9_-]{43}$/);
    expect(code.length).toBeGreaterThan(10);
    expect(code.join('')).toMatch(/[▀▄█]/);
  });

  it('revoke asks first: --yes when not interactive (exit 2), and nothing is revoked', async () => {
    const before = await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`);
    expect(await cli(['gateways', 'revoke', 'Dock 7'])).toEqual({ code: 2, stdout: '', stderr: 'scanhub: --yes required when not running interactively\n' });
    expect(await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`)).toEqual(before);
  });

  it('revoke prints the revoked certificate and what it did; a second revoke is a conflict (exit 1)', async () => {
    const before = await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`);
    const result = await cli(['gateways', 'revoke', 'Dock 7', '--yes']);
    expect(result.code).toBe(0);
    expect(fieldsOf(result.stdout)).toEqual({
      serial: before.serial,
      status: 'revoked',
      not_before: new Date(before.not_before).toISOString(),
      not_after: new Date(before.not_after).toISOString(),
    });
    expect(result.stderr).toBe(
      `Revoked certificate ${before.serial} of gateway Dock 7 (${id.slice(0, 8)}): the device is disconnected and cannot connect again; \`scanhub gateways reprovision 'Dock 7'\` gives it a new one.\n`,
    );
    const again = await cli(['--json', 'gateways', 'revoke', id, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(new RegExp(`^scanhub: conflict: The certificate of gateway "${id}" was already revoked at \\S+; to give the gateway a new certificate, re-provision it`));
  });

  it('reprovision after a revoke does not promise that the revoked certificate works meanwhile', async () => {
    const result = await cli(['gateways', 'reprovision', 'Dock 7']);
    expect([result.code, result.stderr]).toEqual([
      0,
      `Gateway Dock 7 (${id.slice(0, 8)}) is re-provisioned: the device sends the token to ${t.url}/provisioning within 24 hours; until then it cannot connect: its certificate was revoked.\n`,
    ]);
  });

  it('revoke --json prints the API object', async () => {
    await cli(['gateways', 'reprovision', id]);
    const result = await cli(['--json', 'gateways', 'revoke', id, '--yes']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(await t.admin.get<Certificate>(`/${CUSTOMER}/gateways/${id}/certificate`));
    expect((JSON.parse(result.stdout) as Certificate).status).toBe('revoked');
  });

  it('an unknown gateway name is one line naming where to look (exit 1)', async () => {
    expect(await cli(['gateways', 'revoke', 'no-such-dock', '--yes'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'scanhub: no gateway is named "no-such-dock": see `scanhub gateways list`\n',
    });
  });
});
