import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../../helpers/store-rows.js';
import { adminEnv, runCli, runOnTerminal, spawnCli } from '../../helpers/cli.js';
import { eventRow, newestFirst } from '../../helpers/events.js';
import { exportFixture } from '../../helpers/fixtures.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const fixture = exportFixture();
const inRange = fixture.rows.filter((row) => row.created >= fixture.start && row.created < fixture.end);
const FROM = new Date(fixture.start).toISOString();
const TO = new Date(fixture.end).toISOString();
const GATEWAY = '7b0e7c64-3c4f-4c39-9d0f-0a1c2b3d4e5f';

let t: TestServer;
let env: NodeJS.ProcessEnv;
let workDir: string;

beforeAll(async () => {
  t = await startTestServer();
  await insertEvents(t.server, CUSTOMER, fixture.rows);
  env = adminEnv(t);
  workDir = mkdtempSync(join(tmpdir(), 'scanhub-cli-'));
});
afterAll(async () => {
  await t.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** The fixture CSV's records (after the header), split where a record starts. */
const [csvHeader, ...csvRecords] = fixture.csv.split(/\r\n(?=00000000-)/);

describe('scanhub events list', () => {
  it('prints tab-separated rows, newest first, when piped', async () => {
    const result = await runCli(['events', 'list', '--from', FROM, '--to', TO], { env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      newestFirst(inRange)
        .map((e) => [new Date(e.created).toISOString(), e.type, e.gateway_id ?? '', e.device_id ?? '', (e.scan_code ?? '').replace(/[\t\r\n]/g, ' '), e.id].join('\t') + '\n')
        .join(''),
    );
  });

  it('prints the API items with --json', async () => {
    const result = await runCli(['events', 'list', '--json', '--from', FROM, '--to', TO, '--limit', '3', '--all'], { env });
    expect(result.code).toBe(0);
    const api = await t.admin.get<{ items: unknown[] }>(`/${CUSTOMER}/events`, { start_time_millis: fixture.start, end_time_millis: fixture.end });
    expect(result.stdout).toBe(JSON.stringify(api.items, null, 2) + '\n');
  });

  it('prints the export format with --csv, in list order', async () => {
    const result = await runCli(['events', 'list', '--csv', '--from', String(fixture.start), '--to', String(fixture.end)], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe([csvHeader, ...csvRecords.map((r) => r.replace(/\r\n$/, '')).reverse()].join('\r\n') + '\r\n');
  });

  it('prints the cells as stored with --csv --raw-cells; --raw-cells without --csv is exit 2', async () => {
    const range = ['--from', String(fixture.start), '--to', String(fixture.end)];
    const result = await runCli(['events', 'list', '--csv', '--raw-cells', ...range], { env });
    const [rawHeader, ...rawRecords] = fixture.rawCsv.split(/\r\n(?=00000000-)/);
    expect(result).toEqual({ code: 0, stderr: '', stdout: [rawHeader, ...rawRecords.map((r) => r.replace(/\r\n$/, '')).reverse()].join('\r\n') + '\r\n' });
    expect(await runCli(['events', 'list', '--raw-cells', ...range], { env })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --raw-cells applies to --csv only: add --csv or leave it out\n',
    });
  });

  it('prints at most --limit events and says how to get the rest', async () => {
    const result = await runCli(['events', 'list', '--from', FROM, '--to', TO, '--limit', '2'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').map((line) => line.split('\t').pop())).toEqual(newestFirst(inRange).slice(0, 2).map((e) => e.id));
    expect(result.stderr).toBe('Printed the newest 2 events of the range; --all prints every one.\n');
  });

  it('filters by gateway', async () => {
    const result = await runCli(['events', 'list', '--from', FROM, '--to', TO, '--gateway', GATEWAY], { env });
    expect(result.stdout.trimEnd().split('\n').map((line) => line.split('\t').pop())).toEqual(
      newestFirst(inRange.filter((e) => e.gateway_id === GATEWAY)).map((e) => e.id),
    );
  });

  it('takes a gateway name for --gateway; a name no gateway has: exit 1 naming gateways list', async () => {
    const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'Dock A', usecase: 'inbound', station: 'dock-a' });
    // After the fixture's range, so that the other tests' ranges do not see it.
    const event = eventRow({ created: fixture.end + 1000, scan_code: 'by-name', gateway_id: gateway.id });
    await insertEvents(t.server, CUSTOMER, [event]);
    const range = ['--from', String(fixture.end), '--to', String(fixture.end + 2000)];
    const result = await runCli(['events', 'list', ...range, '--gateway', 'Dock A'], { env });
    // Rows name the gateway beside its short id (DESIGN.md "CLI conventions").
    const label = `Dock A (${gateway.id.slice(0, 8)})`;
    expect(result).toEqual({ code: 0, stderr: '', stdout: [new Date(event.created).toISOString(), 'scan', label, event.device_id ?? '', 'by-name', event.id].join('\t') + '\n' });
    const unknown = await runCli(['events', 'list', ...range, '--gateway', 'Dock Z'], { env });
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'scanhub: no gateway is named "Dock Z": see `scanhub gateways list`\n' });
  });

  it('an empty range on a terminal says so once', async () => {
    const terminal = runOnTerminal(['events', 'list', '--since', '2000-01-01T00:00:00Z', '--until', '2000-01-02T00:00:00Z'], env);
    expect(await terminal.exited).toBe(0);
    expect(terminal.output()).toBe('No results.\r\n');
  });

  it.each([
    [['--since', '2x'], 'scanhub: --since: "2x" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d\n'],
    [['--since', '2h', '--from', FROM], 'scanhub: --from is the old name of --since: give one of them\n'],
    [['--from', 'yesterday'], 'scanhub: --from: "yesterday" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d\n'],
    [['--from', TO, '--to', FROM], `scanhub: the range starts (${TO}) after it ends (${FROM})\n`],
  ])('refuses %j with exit code 2', async (args, stderr) => {
    expect(await runCli(['events', 'list', ...args], { env })).toEqual({ code: 2, stdout: '', stderr });
  });
});

describe('scanhub events export', () => {
  it.each([[[]], [['--async']]])('writes the exact CSV to -o %j', async (extra) => {
    const file = join(workDir, `export${extra.length}.csv`);
    const result = await runCli(['events', 'export', '--from', FROM, '--to', TO, '-o', file, ...extra], { env });
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(file, 'utf8')).toBe(fixture.csv);
    expect(result.stderr).toBe(`Wrote the events of ${FROM} to ${TO} to ${file} (${(Buffer.byteLength(fixture.csv) / 1024).toFixed(1)} KiB).\n`);
    expect(readdirSync(workDir).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });

  it.each([[[]], [['--async']]])('writes the cells as stored with --raw-cells %j', async (extra) => {
    const file = join(workDir, `raw${extra.length}.csv`);
    const result = await runCli(['events', 'export', '--from', FROM, '--to', TO, '-o', file, '--raw-cells', ...extra], { env });
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(file, 'utf8')).toBe(fixture.rawCsv);
  });

  it('refuses an existing file unless --force, and a missing folder, before asking the server (exit 2)', async () => {
    const exportsOnServer = () => readdirSync(join(t.dataDir, 'exports')).length;
    const before = exportsOnServer();
    const file = join(workDir, 'taken.csv');
    writeFileSync(file, 'keep me');
    const refused = await runCli(['events', 'export', '--from', FROM, '--to', TO, '-o', file], { env });
    expect(refused).toEqual({ code: 2, stdout: '', stderr: `scanhub: ${file} exists: pass --force to overwrite it or -o for another file\n` });
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    const nowhere = join(workDir, 'missing', 'x.csv');
    const missing = await runCli(['events', 'export', '--from', FROM, '--to', TO, '-o', nowhere], { env });
    expect(missing).toEqual({ code: 2, stdout: '', stderr: `scanhub: cannot write ${nowhere}: ${join(workDir, 'missing')} is not a folder\n` });
    expect(exportsOnServer()).toBe(before);
    const forced = await runCli(['events', 'export', '--from', FROM, '--to', TO, '-o', file, '--force'], { env });
    expect(forced.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(fixture.csv);
    expect(exportsOnServer()).toBe(before + 1);
  });

  it('names the file after the range when -o is not given', async () => {
    const result = await runCli(['events', 'export', '--from', FROM, '--to', TO], { env, cwd: workDir });
    expect(result.code).toBe(0);
    expect(readFileSync(join(workDir, 'events-20240501T100000Z-20240501T100100Z.csv'), 'utf8')).toBe(fixture.csv);
  });
});

describe('scanhub events tail', () => {
  it('still takes --interval of the polling tail, ignored, but refuses one that is no duration (exit 2)', async () => {
    expect(await runCli(['events', 'tail', '--interval', 'soon'], { env })).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: option '--interval <duration>' argument 'soon' is invalid. "soon" is not a duration: use a number and a unit, e.g. 30s, 30m, 2h, 7d or 2w\n(run with --help for usage)\n`,
    });
  });

  it('prints events as they are stored, each once, until interrupted', async () => {
    const tail = spawnCli(['events', 'tail', '--interval', '100ms'], env);

    // The tail prints what is stored once it is connected: wait for its stream to start.
    await new Promise((started) => t.server.ctx.liveEvents.once('open', started));
    const first = eventRow({ created: Date.now(), scan_code: 'first', gateway_id: GATEWAY });
    await insertEvents(t.server, CUSTOMER, [first]);
    await tail.printed(first.id);
    const second = eventRow({ created: Date.now(), scan_code: 'second' });
    await insertEvents(t.server, CUSTOMER, [second]);
    await tail.printed(second.id);
    tail.kill('SIGINT');
    expect(await tail.exited).toBe(0);
    expect(tail.stderr()).toBe('');
    expect(tail.stdout().split('\n').filter(Boolean).map((line) => line.split('\t').slice(1))).toEqual([
      ['scan', GATEWAY, '', 'first', first.id],
      ['scan', '', '', 'second', second.id],
    ]);
  });
});
