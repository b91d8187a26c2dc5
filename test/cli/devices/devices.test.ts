// `scanhub devices list|show` as a process (piped: tab-separated rows, ISO times): the gateway's
// name beside its short id, filters by gateway name or id, status and battery, `--json` the API's
// items, and the refusals of bad flags and unknown devices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../../src/client/devices.js';
import { runCli } from '../../helpers/cli.js';
import { eventRow } from '../../helpers/events.js';
import { call } from '../../helpers/http.js';
import { insertEvents } from '../../helpers/store-rows.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (millis: number) => new Date(millis).toISOString();

let t: TestServer;
let env: NodeJS.ProcessEnv;
let dock: string;
let now: number;

beforeAll(async () => {
  t = await startTestServer();
  env = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken, SCANHUB_CUSTOMER: CUSTOMER };
  dock = (await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'Dock 1', usecase: 'inbound', station: 'dock-1' })).id;
  now = Date.now();
  await insertEvents(t, CUSTOMER, [
    eventRow({ created: now - HOUR, device_id: 'ring-1', gateway_id: dock, device_battery: 87.5, device_firmware: '2.4.1', device_temperature: 31.5 }),
    eventRow({ created: now - 3 * HOUR, type: 'telemetry', device_id: 'ring-2', gateway_id: 'gone-gateway', device_battery: 12 }),
    eventRow({ created: now - 8 * DAY, device_id: 'ring-3' }),
  ]);
});
afterAll(() => t.close());

const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { env: { ...env, ...extra } });
const short = () => dock.slice(0, 8);

describe('scanhub devices list', () => {
  it('prints one tab-separated row per scanner, by device id: the gateway by name beside its short id, an unknown one by its id', async () => {
    expect(await cli(['devices', 'list'])).toEqual({
      code: 0,
      stdout: [
        `ring-1\tACTIVE\t87.5\t2.4.1\t31.5\tDock 1 (${short()})\t${iso(now - HOUR)}`,
        `ring-2\tINACTIVE\t12\t\t\tgone-gateway\t${iso(now - 3 * HOUR)}`,
        `ring-3\tLOST\t\t\t\t\t${iso(now - 8 * DAY)}`,
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('--json prints the API\'s items', async () => {
    const api = await call(t.url, 'GET', `/${CUSTOMER}/devices`, { token: t.adminToken });
    const result = await cli(['--json', 'devices', 'list']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout) as Device[]).toEqual((api.body as { items: Device[] }).items);
    expect((JSON.parse(result.stdout) as Device[]).map((d) => d.device_id)).toEqual(['ring-1', 'ring-2', 'ring-3']);
  });

  it('filters by gateway (name or id), status (any case) and battery', async () => {
    const rows = async (...args: string[]) => {
      const result = await cli(['devices', 'list', ...args]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      return result.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0]);
    };
    expect(await rows('--gateway', 'Dock 1')).toEqual(['ring-1']);
    expect(await rows('--gateway', dock, '--status', 'lost')).toEqual([]);
    expect(await rows('--status', 'INACTIVE')).toEqual(['ring-2']);
    expect(await rows('--battery-below', '87.5')).toEqual(['ring-2']);
    expect(await rows('--battery-below', '90', '--status', 'ACTIVE')).toEqual(['ring-1']);
  });

  it('refuses a status or battery level that is none (exit 2) and a gateway name that no gateway has (exit 1)', async () => {
    const status = await cli(['devices', 'list', '--status', 'gone']);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`option '--status <status>' argument 'gone' is invalid. "gone" is not a status: use ACTIVE, INACTIVE, LOST.`);
    const battery = await cli(['devices', 'list', '--battery-below', '150']);
    expect(battery.code).toBe(2);
    expect(battery.stderr).toContain(`"150" is not a battery level from 0 to 100.`);
    expect(await cli(['devices', 'list', '--gateway', 'Dock 9'])).toEqual({ code: 1, stdout: '', stderr: 'scanhub: no gateway is named "Dock 9": see `scanhub gateways list`\n' });
  });

  it('with a key that may read events but not gateways: gateways by id', async () => {
    const { key } = await t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'events-only', permissions: ['event.read'] });
    const result = await cli(['devices', 'list', '--status', 'ACTIVE'], { SCANHUB_TOKEN: key });
    expect(result).toEqual({ code: 0, stdout: `ring-1\tACTIVE\t87.5\t2.4.1\t31.5\t${dock}\t${iso(now - HOUR)}\n`, stderr: '' });
  });
});

describe('scanhub devices show', () => {
  it('prints the scanner as field<TAB>value lines; --json the API\'s object', async () => {
    expect(await cli(['devices', 'show', 'ring-1'])).toEqual({
      code: 0,
      stdout: [
        'device_id\tring-1',
        'status\tACTIVE',
        'battery\t87.5',
        'firmware\t2.4.1',
        'temperature\t31.5',
        `last_gateway\tDock 1 (${short()})`,
        `last_seen\t${iso(now - HOUR)}`,
        `first_seen\t${iso(now - HOUR)}`,
        '',
      ].join('\n'),
      stderr: '',
    });
    const json = await cli(['--json', 'devices', 'show', 'ring-3']);
    expect(JSON.parse(json.stdout)).toEqual((await call(t.url, 'GET', `/${CUSTOMER}/devices/ring-3`, { token: t.adminToken })).body);
  });

  it('an unknown device: exit 1 with the API\'s sentence', async () => {
    const result = await cli(['devices', 'show', 'ring-9']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `scanhub: not found: Device "ring-9" does not exist: no event of customer "${CUSTOMER}" names it\n` });
  });
});
