import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, runCli } from '../helpers/cli.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

// A gateway plants spreadsheet formulas in the text fields of its events (issue 12, OWASP "CSV
// Injection"). Every export path must write them with a leading ' by default (DESIGN.md "Events"),
// and as stored with cells=raw / --raw-cells. The numbers stay numbers, -3.5 included.

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const START = 1714557600000; // 2024-05-01T10:00:00Z
const RANGE = { start_time_millis: START, end_time_millis: START + 60_000 };
const STATION = '@dock 4';

// What the gateway publishes. The range is written in two parts cut at START + 30 s (two worker
// threads where the machine has two cores): the last three events are in the second part.
const PLANTED = [
  { id: id(1), type: 'scan', created: START + 1000, scan_code: '=HYPERLINK("http://x","y")', device_id: 'M001-000123' },
  { id: id(2), type: 'scan', created: START + 2000, scan_code: '+1+2', device_id: 'M001-000123' },
  { id: id(3), type: 'scan', created: START + 3000, scan_code: '-3+4', device_id: 'M001-000123' },
  { id: id(4), type: 'scan', created: START + 4000, scan_code: '@SUM(A1:A2)', device_id: 'M001-000123' },
  { id: id(5), type: 'scan', created: START + 5000, scan_code: '\t=1+1', device_id: 'M001-000123' },
  { id: id(6), type: 'scan', created: START + 6000, scan_code: '\r=1+1', device_id: 'M001-000123' },
  { id: id(7), type: 'scan', created: START + 40_000, scan_code: '4006381333931', device_id: "=cmd|' /C calc'!A0" },
  { id: id(8), type: 'scan', created: START + 41_000, scan_code: 'M001-000123-7', scan_decode_symbology: 'CODE_128', device_id: 'M001-000123' },
  { id: id(9), type: 'telemetry', created: START + 42_000, device_id: 'M001-000123', device_battery: 0.87, device_temperature: -3.5 },
];

const HEADER =
  'id,class,type,created,scan_code,scan_duration,scan_decode_symbology,device_id,device_battery,device_firmware,device_temperature,gateway_id,gateway_usecase,gateway_station,metrics_worker_steps\r\n';

/** The export by default, record by record, oldest first. */
const safeRecords = (gateway: string) => [
  `${id(1)},event,scan,1714557601000,"'=HYPERLINK(""http://x"",""y"")",,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(2)},event,scan,1714557602000,'+1+2,,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(3)},event,scan,1714557603000,'-3+4,,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(4)},event,scan,1714557604000,'@SUM(A1:A2),,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(5)},event,scan,1714557605000,'\t=1+1,,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(6)},event,scan,1714557606000,"'\r=1+1",,,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(7)},event,scan,1714557640000,4006381333931,,,'=cmd|' /C calc'!A0,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(8)},event,scan,1714557641000,M001-000123-7,,CODE_128,M001-000123,,,,${gateway},picking,'@dock 4,\r\n`,
  `${id(9)},event,telemetry,1714557642000,,,,M001-000123,0.87,,-3.5,${gateway},picking,'@dock 4,\r\n`,
];

/** The export with cells=raw: the stored values, quoted per RFC 4180 only. */
const rawRecords = (gateway: string) => [
  `${id(1)},event,scan,1714557601000,"=HYPERLINK(""http://x"",""y"")",,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(2)},event,scan,1714557602000,+1+2,,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(3)},event,scan,1714557603000,-3+4,,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(4)},event,scan,1714557604000,@SUM(A1:A2),,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(5)},event,scan,1714557605000,\t=1+1,,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(6)},event,scan,1714557606000,"\r=1+1",,,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(7)},event,scan,1714557640000,4006381333931,,,=cmd|' /C calc'!A0,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(8)},event,scan,1714557641000,M001-000123-7,,CODE_128,M001-000123,,,,${gateway},picking,@dock 4,\r\n`,
  `${id(9)},event,telemetry,1714557642000,,,,M001-000123,0.87,,-3.5,${gateway},picking,@dock 4,\r\n`,
];

let t: TestServer;
let gateway: string;
let safeCsv: string;
let rawCsv: string;
let env: NodeJS.ProcessEnv;
let workDir: string;

beforeAll(async () => {
  t = await startTestServer();
  const provisioned = await provisionGateway(t, { usecase: 'picking', station: STATION });
  gateway = provisioned.id;
  const client: MqttClient = await connectGateway(provisioned);
  try {
    // QoS 1: the PUBACK comes once the events are committed.
    await client.publishAsync(provisioned.topic, JSON.stringify(PLANTED), { qos: 1 });
  } finally {
    await client.endAsync();
  }
  safeCsv = HEADER + safeRecords(gateway).join('');
  rawCsv = HEADER + rawRecords(gateway).join('');
  env = adminEnv(t);
  workDir = mkdtempSync(join(tmpdir(), 'scanhub-csv-injection-'));
});
afterAll(async () => {
  await t?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

async function download(link: string): Promise<string> {
  const response = await fetch(link);
  expect(response.status).toBe(200);
  return response.text();
}

describe('events with planted formulas', () => {
  it('are stored and listed as the gateway sent them', async () => {
    const { items } = await t.admin.get<{ items: Record<string, unknown>[] }>(`/${CUSTOMER}/events`, RANGE);
    expect(items.map((e) => [e.scan_code, e.device_id, e.device_temperature]).reverse()).toEqual(
      PLANTED.map((e) => [e.scan_code, e.device_id, e.device_temperature]),
    );
  });

  it('are exported with a leading quote by GET /events/export, and as stored with cells=raw', async () => {
    const safe = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export`, RANGE);
    expect(await download(safe.download_link)).toBe(safeCsv);
    const raw = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export`, { ...RANGE, cells: 'raw' });
    expect(await download(raw.download_link)).toBe(rawCsv);
  });

  it.each([
    ['no body', undefined, () => safeCsv],
    ['{"cells":"safe"}', { cells: 'safe' }, () => safeCsv],
    ['{"cells":"raw"}', { cells: 'raw' }, () => rawCsv],
  ])('are exported by an export task with %s as expected', async (_name, body, expected) => {
    const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`, body, RANGE);
    await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, task))!);
    const state = await t.admin.get<{ status: string; download_link?: string }>(`/${CUSTOMER}/events/export/tasks/${task}`);
    expect(state.status).toBe('SUCCESSFUL');
    expect(await download(state.download_link!)).toBe(expected());
  });

  it.each([
    ['events export', [], () => safeCsv],
    ['events export --async', ['--async'], () => safeCsv],
    ['events export --raw-cells', ['--raw-cells'], () => rawCsv],
    ['events export --async --raw-cells', ['--async', '--raw-cells'], () => rawCsv],
  ])('are written by `scanhub %s` as expected', async (name, flags, expected) => {
    const file = join(workDir, `${name.replace(/\W+/g, '-')}.csv`);
    const range = ['--from', String(RANGE.start_time_millis), '--to', String(RANGE.end_time_millis)];
    const result = await runCli(['events', 'export', ...range, '-o', file, ...flags], { env });
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(file, 'utf8')).toBe(expected());
  });

  it.each([
    ['events list --csv', [], () => safeRecords(gateway)],
    ['events list --csv --raw-cells', ['--raw-cells'], () => rawRecords(gateway)],
  ])('are printed by `scanhub %s` newest first', async (_name, flags, records) => {
    const range = ['--from', String(RANGE.start_time_millis), '--to', String(RANGE.end_time_millis)];
    const result = await runCli(['events', 'list', '--csv', ...range, ...flags], { env });
    expect(result).toEqual({ code: 0, stderr: '', stdout: HEADER + records().reverse().join('') });
  });
});
