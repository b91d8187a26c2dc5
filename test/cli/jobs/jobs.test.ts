import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { eventId, scanRow } from '../../helpers/events.js';
import { insertEvents, insertGateway } from '../../helpers/store-rows.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const T0 = Date.UTC(2025, 5, 1, 8);
const G1 = '11111111-1111-4111-8111-111111111111';
const G2 = '22222222-2222-4222-8222-222222222222';
const MINUTE = 60_000;

let ts: TestServer;
let config: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  ts = await startTestServer();
  config = mkdtempSync(join(tmpdir(), 'scanhub-cli-config-'));
  env = adminEnv(ts, { XDG_CONFIG_HOME: config });
  await insertGateway(ts, CUSTOMER, 'gw-1', G1);
  await insertGateway(ts, CUSTOMER, 'gw-2', G2);
  // G1: jobs of 2 and 4 minutes with a product scan between; G2: one job of 30 s, then one left open.
  await insertEvents(ts, CUSTOMER, [
    scanRow(eventId(1), G1, T0, 'PACK-S-1'),
    scanRow(eventId(2), G1, T0 + MINUTE, '4006381333931'),
    scanRow(eventId(3), G1, T0 + 2 * MINUTE, 'PACK-E-1'),
    scanRow(eventId(4), G2, T0 + 3 * MINUTE, 'PACK-S-2'),
    scanRow(eventId(5), G2, T0 + 3 * MINUTE + 30_000, 'PACK-E-2'),
    scanRow(eventId(6), G1, T0 + 10 * MINUTE, 'PACK-S-3'),
    scanRow(eventId(7), G1, T0 + 14 * MINUTE, 'PACK-E-3'),
    scanRow(eventId(8), G2, T0 + 20 * MINUTE, 'PACK-S-4'),
  ]);
});

afterEach(async () => {
  await ts.close();
  rmSync(config, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, { env });
const range = ['--from', '2025-06-01T08:00:00Z', '--to', '2025-06-01T09:00:00Z'];

async function createPacking(): Promise<{ job_config_id: string }> {
  const created = await cli('jobs', 'create', '--name', 'Packing', '--start', 'PACK-S', '--end', 'PACK-E', '--gateway', G1, G2, '--json');
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout) as { job_config_id: string };
}

describe('scanhub jobs', () => {
  it('create prints the configuration and list --json prints the API items', async () => {
    const created = await cli('jobs', 'create', '--name', 'Packing', '--start', 'PACK-S', '--end', 'PACK-E', '--gateway', G1, '--gateway', G2, '--json');
    expect(created.code).toBe(0);
    const job = JSON.parse(created.stdout) as { job_config_id: string; created: number };
    expect(job).toEqual({
      job_config_id: job.job_config_id,
      job_name: 'Packing',
      created: job.created,
      last_updated: job.created,
      start_barcode: 'PACK-S',
      end_barcode: 'PACK-E',
      gateway_ids: [G1, G2],
      class: 'jobconfig',
      version: 1,
    });
    expect(created.stderr).toBe(`Created job configuration "Packing" (${job.job_config_id}).\n`);
    const list = await cli('jobs', 'list', '--json');
    expect([list.code, JSON.parse(list.stdout)]).toEqual([0, [job]]);
    const get = await cli('jobs', 'get', 'Packing', '--json');
    expect(JSON.parse(get.stdout)).toEqual(job);
  });

  it('analyze --json prints the API response', async () => {
    await createPacking();
    const result = await cli('jobs', 'analyze', 'Packing', ...range, '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      results: [
        {
          gateway_id: G1,
          jobs: [
            { start_time: T0, end_time: T0 + 2 * MINUTE, start_event_id: eventId(1), end_event_id: eventId(3) },
            { start_time: T0 + 10 * MINUTE, end_time: T0 + 14 * MINUTE, start_event_id: eventId(6), end_event_id: eventId(7) },
          ],
        },
        { gateway_id: G2, jobs: [{ start_time: T0 + 3 * MINUTE, end_time: T0 + 3 * MINUTE + 30_000, start_event_id: eventId(4), end_event_id: eventId(5) }] },
      ],
    });
  });

  it('analyze --csv prints one row per job in milliseconds', async () => {
    const { job_config_id } = await createPacking();
    const result = await cli('jobs', 'analyze', job_config_id, ...range, '--csv');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'gateway_id,start_time,end_time,duration_ms,start_event_id,end_event_id',
        `${G1},${T0},${T0 + 120_000},120000,${eventId(1)},${eventId(3)}`,
        `${G1},${T0 + 600_000},${T0 + 840_000},240000,${eventId(6)},${eventId(7)}`,
        `${G2},${T0 + 180_000},${T0 + 210_000},30000,${eventId(4)},${eventId(5)}`,
        '',
      ].join('\n'),
    );
  });

  it('analyze piped prints tab-separated jobs, a blank line and the summary per gateway, gateways by name', async () => {
    await createPacking();
    const result = await cli('jobs', 'analyze', 'Packing', ...range);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `gw-1 (11111111)\t2025-06-01T08:00:00.000Z\t2025-06-01T08:02:00.000Z\t2m 00s`,
        `gw-1 (11111111)\t2025-06-01T08:10:00.000Z\t2025-06-01T08:14:00.000Z\t4m 00s`,
        `gw-2 (22222222)\t2025-06-01T08:03:00.000Z\t2025-06-01T08:03:30.000Z\t30.0s`,
        '',
        `gw-1 (11111111)\t2\t3m 00s\t4m 00s\t4m 00s`,
        `gw-2 (22222222)\t1\t30.0s\t30.0s\t30.0s`,
        '',
      ].join('\n'),
    );
  });

  it('get and list name the gateways beside their short ids; --json keeps the ids', async () => {
    const { job_config_id } = await createPacking();
    const got = await cli('jobs', 'get', 'Packing');
    expect([got.code, got.stdout.split('\n').find((line) => line.startsWith('gateways\t'))]).toEqual([0, 'gateways\tgw-1 (11111111),gw-2 (22222222)']);
    const listed = await cli('jobs', 'list');
    expect(listed.stdout).toBe(`${job_config_id}\tPacking\tPACK-S\tPACK-E\tgw-1 (11111111),gw-2 (22222222)\t1\t${listed.stdout.split('\t')[6]}`);
    expect((JSON.parse((await cli('jobs', 'get', 'Packing', '--json')).stdout) as { gateway_ids: string[] }).gateway_ids).toEqual([G1, G2]);
  });

  it('--since 2h analyses the last two hours only, where these events are not', async () => {
    await createPacking();
    const result = await cli('jobs', 'analyze', 'Packing', '--since', '2h', '--json');
    expect(JSON.parse(result.stdout)).toEqual({ results: [{ gateway_id: G1, jobs: [] }, { gateway_id: G2, jobs: [] }] });
  });

  it('update raises the version; delete needs --yes when not interactive', async () => {
    await createPacking();
    // Gateways by name as well as by id.
    const updated = await cli('jobs', 'update', 'Packing', '--end', 'PACK-DONE', '--gateway', 'gw-2', '--json');
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ end_barcode: 'PACK-DONE', gateway_ids: [G2], version: 2 });
    expect(updated.stderr).toBe('Updated job configuration "Packing" to version 2.\n');

    const refused = await cli('jobs', 'delete', 'Packing');
    expect([refused.code, refused.stderr]).toEqual([2, 'scanhub: --yes required when not running interactively\n']);
    const deleted = await cli('jobs', 'delete', 'Packing', '--yes');
    expect([deleted.code, deleted.stderr]).toEqual([0, 'Deleted job configuration "Packing".\n']);
    expect((await cli('jobs', 'list', '--json')).stdout.trim()).toBe('[]');
  });

  it('refuses unknown jobs, bad times and API errors with a sentence and the right exit code', async () => {
    await createPacking();
    expect(await cli('jobs', 'analyze', 'Unpacking')).toMatchObject({
      code: 1,
      stderr: 'scanhub: no job configuration is named "Unpacking": see `scanhub jobs list`\n',
    });
    expect(await cli('jobs', 'analyze', 'Packing', '--since', '2h', '--from', '2025-06-01')).toMatchObject({
      code: 2,
      stderr: 'scanhub: --from is the old name of --since: give one of them\n',
    });
    expect(await cli('jobs', 'analyze', 'Packing', '--since', 'yesterday')).toMatchObject({
      code: 2,
      stderr: 'scanhub: --since: "yesterday" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d\n',
    });
    expect(await cli('jobs', 'create', '--name', 'Packing', '--start', 'A', '--end', 'B', '--gateway', G1)).toMatchObject({
      code: 1,
      stderr: 'scanhub: conflict: A job configuration named "Packing" already exists: choose another job_name\n',
    });
    expect(await cli('jobs', 'update', 'Packing', '--gateway', 'gw-9')).toMatchObject({
      code: 1,
      stderr: 'scanhub: no gateway is named "gw-9": see `scanhub gateways list`\n',
    });
    expect(await cli('jobs', 'update', 'Packing')).toMatchObject({
      code: 2,
      stderr: 'scanhub: nothing to change: give --name, --start, --end or --gateway\n',
    });
  });
});
