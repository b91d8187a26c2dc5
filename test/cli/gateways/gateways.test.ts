import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { fixturePath } from '../../helpers/fixtures.js';
import { call } from '../../helpers/http.js';
import { UUID } from '../../helpers/patterns.js';
import { decodeTerminalQr } from '../../helpers/qr.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const fixture = fixturePath;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Gateway {
  id: string;
  name: string;
  usecase: string;
  station: string;
  connectivity_status: string;
  created: number;
}

let t: TestServer;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await startTestServer();
  env = adminEnv(t);
});
afterAll(() => t.close());

const cli = (args: string[], input?: string) => runCli(args, { env, input });

/** `field<TAB>value` lines of a piped `get` into an object. */
function fieldsOf(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.trimEnd().split('\n').map((line) => line.split('\t') as [string, string]));
}

describe('scanhub gateways', () => {
  let id: string;

  it('create prints the gateway as field<TAB>value lines and says what changed on stderr', async () => {
    const result = await cli(['gateways', 'create', '--name', 'Dock 1', '--usecase', 'inbound', '--station', 'dock-1']);
    expect(result.code).toBe(0);
    const fields = fieldsOf(result.stdout);
    id = fields.id!;
    expect(id).toMatch(UUID);
    expect(fields).toEqual({
      id,
      name: 'Dock 1',
      usecase: 'inbound',
      station: 'dock-1',
      type: 'stationary',
      connectivity_status: 'NOT_REGISTERED',
      model: '',
      manufacturer: '',
      firmware: '',
      thing_name: id,
      created: fields.created,
      last_updated: fields.created,
      version: '1',
    });
    expect(fields.created).toMatch(ISO);
    expect(result.stderr).toBe(`Created gateway Dock 1 (${id.slice(0, 8)}); provision it with \`scanhub gateways provision 'Dock 1'\`.\n`);
  });

  it('create --json prints the API object', async () => {
    const result = await cli(['--json', 'gateways', 'create', '--name', 'Dock 2', '--usecase', 'inbound', '--station', 'dock-2']);
    expect(result.code).toBe(0);
    const gateway = JSON.parse(result.stdout) as Gateway;
    const api = await call(t.url, 'GET', `/acme/gateways/${gateway.id}`, { token: t.adminToken });
    expect(gateway).toEqual(api.body);
  });

  it('create with a taken name fails with exit 1 and the API details', async () => {
    const result = await cli(['gateways', 'create', '--name', 'Dock 1', '--usecase', 'u', '--station', 's']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'scanhub: conflict: A gateway named "Dock 1" already exists\n' });
  });

  it('list piped prints tab-separated rows; --json prints the API items', async () => {
    const api = (await call(t.url, 'GET', '/acme/gateways', { token: t.adminToken })).body as { items: Gateway[] };
    const tsv = await cli(['gateways', 'list']);
    expect(tsv.code).toBe(0);
    expect(tsv.stdout).toBe(
      api.items.map((g) => [g.id, g.name, g.usecase, g.station, g.connectivity_status, new Date(g.created).toISOString()].join('\t')).join('\n') + '\n',
    );
    const json = await cli(['gateways', 'list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual(api.items);
  });

  it('get takes a gateway name too; a name no gateway has: exit 1 naming gateways list', async () => {
    const byName = await cli(['gateways', 'get', 'Dock 1']);
    expect(byName.code).toBe(0);
    expect(fieldsOf(byName.stdout).id).toBe(id);
    const unknown = await cli(['gateways', 'get', 'Dock 9']);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'scanhub: no gateway is named "Dock 9": see `scanhub gateways list`\n' });
  });

  it('get shows the version; update --if-match changes it and refuses a stale version', async () => {
    expect(fieldsOf((await cli(['gateways', 'get', id])).stdout).version).toBe('1');
    const updated = await cli(['gateways', 'update', id, '--station', 'dock-1a', '--if-match', '1']);
    expect(updated.code).toBe(0);
    expect(fieldsOf(updated.stdout)).toMatchObject({ station: 'dock-1a', version: '2' });
    expect(updated.stderr).toBe(`Updated gateway "Dock 1" (${id}), now at version 2.\n`);
    const stale = await cli(['gateways', 'update', id, '--station', 'lost', '--if-match', '1']);
    expect(stale).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: conflict: Gateway "${id}" was changed meanwhile: its ETag is now "2", not "1"; read it again and retry\n`,
    });
    const nothing = await cli(['gateways', 'update', id]);
    expect(nothing).toEqual({ code: 2, stdout: '', stderr: 'scanhub: nothing to change: pass --name, --usecase or --station\n' });
  });

  it('provision --json prints the API answer; a second provision points at reprovision (exit 1)', async () => {
    const result = await cli(['--json', 'gateways', 'provision', id]);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as { registration_path: string; token: string; registration_url: string };
    expect(answer).toEqual({ registration_path: '/provisioning', token: answer.token, registration_url: `${t.url}/provisioning` });
    expect(answer.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const device = await call(t.url, 'POST', '/provisioning', { json: { token: answer.token } });
    expect(device.status).toBe(200);

    const again = await cli(['gateways', 'provision', 'Dock 1']);
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: gateway Dock 1 (${id.slice(0, 8)}) was prepared before: run \`scanhub gateways reprovision 'Dock 1'\` to give its device a new certificate and token, or create a new gateway for another device\n`,
    });
  });

  it('provision piped prints URL and token without a QR code; --qr adds it', async () => {
    const make = async (name: string) =>
      ((await call(t.url, 'POST', '/acme/gateways', { token: t.adminToken, json: { name, usecase: 'u', station: 's' } })).body as Gateway).id;
    const plain = await cli(['gateways', 'provision', await make('QR 1')]);
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`registration_url\t${t.url}/provisioning`);
    expect(lines[1]).toMatch(/^token\t[A-Za-z0-9_-]{43}$/);

    const qr = await cli(['gateways', 'provision', await make('QR 2'), '--qr']);
    expect(qr.code).toBe(0);
    const [url, token, ...code] = qr.stdout.trimEnd().split('\n');
    expect(url).toBe(`registration_url\t${t.url}/provisioning`);
    expect(token).toMatch(/^token\t/);
    // Small mode: half-block characters, one square module grid of equal-width lines.
    expect(code.length).toBeGreaterThan(10);
    expect(code.join('')).toMatch(/^[ ▀▄█]+$/);
    expect(new Set(code.map((line) => line.length)).size).toBe(1);
    // The provisioning code, as the console shows it too (docs/console.md).
    expect(JSON.parse(decodeTerminalQr(code) ?? 'null')).toEqual({ registration_url: `${t.url}/provisioning`, token: token!.split('\t')[1] });
  });

  it('bulk-create --file reads a CSV with a header row (quoted fields included)', async () => {
    const result = await cli(['gateways', 'bulk-create', '--file', fixture('gateways.csv')]);
    expect(result.code).toBe(0);
    const rows = result.stdout.trimEnd().split('\n').map((line) => line.split('\t'));
    expect(rows.map((r) => r.slice(1, 5))).toEqual([
      ['Aisle 1', 'picking', 'aisle-1', 'NOT_REGISTERED'],
      ['Aisle 2, north', 'picking', 'aisle-2', 'NOT_REGISTERED'],
      ['Packing "A"', 'packing', 'pack-a', 'NOT_REGISTERED'],
    ]);
    expect(result.stderr).toBe('Created 3 gateways.\n');
  });

  it('bulk-create --file reads JSON, and --json prints the created gateways', async () => {
    const result = await cli(['--json', 'gateways', 'bulk-create', '--file', fixture('gateways.json')]);
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as Gateway[];
    expect(created.map((g) => [g.name, g.usecase, g.station])).toEqual([
      ['Line 1', 'assembly', 'line-1'],
      ['Line 2', 'assembly', 'line-2'],
    ]);
  });

  it('bulk-create refuses a CSV without the right header row (exit 2) and sends nothing', async () => {
    const file = fixture('gateways-bad-header.csv');
    const result = await cli(['gateways', 'bulk-create', '--file', file]);
    expect(result).toEqual({ code: 2, stdout: '', stderr: `scanhub: ${file}: the header row must name the columns name,usecase,station (got name,usecase)\n` });
  });

  it('package creates a gateway and prints its link; the package carries the Wi-Fi password read from stdin', async () => {
    const result = await cli(['gateways', 'package', '--new', 'Packaged', '--wifi-ssid', 'warehouse', '--wifi-password-stdin'], 'pass word\n');
    expect(result.code).toBe(0);
    const [gatewayId, link] = result.stdout.trimEnd().split('\t');
    expect(gatewayId).toMatch(UUID);
    expect(result.stderr).toBe('Prepared 1 gateway; each link works for 24 hours.\n');
    const document = await call('', 'GET', link!);
    expect(document.body).toMatchObject({ base_url: t.url, registration_path: '/provisioning', wifi: { ssid: 'warehouse', password: 'pass word' }, gateway_id: gatewayId });
  });

  it('delete without --yes when not interactive is a usage error; with --yes it deletes', async () => {
    const gateway = (await call(t.url, 'POST', '/acme/gateways', { token: t.adminToken, json: { name: 'Gone', usecase: 'u', station: 's' } })).body as Gateway;
    expect(await cli(['gateways', 'delete', gateway.id])).toEqual({ code: 2, stdout: '', stderr: 'scanhub: --yes required when not running interactively\n' });
    const deleted = await cli(['gateways', 'delete', gateway.id, '--yes']);
    expect(deleted).toEqual({ code: 0, stdout: '', stderr: `Deleted gateway Gone (${gateway.id.slice(0, 8)}).\n` });
    expect((await cli(['gateways', 'get', gateway.id])).code).toBe(1);
  });
});
