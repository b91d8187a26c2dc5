import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { analyzeJobs } from '../../../src/domain/job-analysis.js';
import { insertEvents } from '../../../src/store/sqlite/event-rows.js';
import { SqliteJobAnalysis } from '../../../src/store/sqlite/job-analysis.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';
import { eventId, scanRow } from '../../helpers/events.js';

let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'scanhub-pool-'));
  db = openDatabase(join(dir, 'scanhub.db'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const barcodes = { start_barcode: 'S', end_barcode: 'E' };

it('queues analyses beyond its size, answers each with its own result, and refuses work once closed', async () => {
  const rows = Array.from({ length: 40 }, (_, i) => scanRow(eventId(i), i % 2 ? 'g1' : 'g2', i * 10, i % 4 < 2 ? 'S' : 'E'));
  insertEvents(db, 'c', rows);
  const pool = new SqliteJobAnalysis(db, 1);
  const ranges = [0, 100, 200, 300, 400].map((start) => ({ start_time: start, end_time: start + 150 }));
  const answers = await Promise.all(ranges.map((range) => pool.analyze({ gatewayIds: ['g1', 'g2'], barcodes, range })));
  const events = rows.map((r) => ({ id: r.id, type: r.type, created: r.created, scan_code: r.scan_code, gateway_id: r.gateway_id }));
  expect(answers.map((body) => JSON.parse(body.toString('utf8')))).toEqual(
    ranges.map((range) => ({ results: analyzeJobs(barcodes, ['g1', 'g2'], range, events) })),
  );
  await pool.close();
  await expect(pool.analyze({ gatewayIds: ['g1'], barcodes, range: ranges[0]! })).rejects.toThrow('the job analysis pool is closed');
});

it('sees events committed after it started: each analysis reads a fresh snapshot', async () => {
  const pool = new SqliteJobAnalysis(db, 1);
  const request = { gatewayIds: ['g1'], barcodes, range: { start_time: 0, end_time: 1_000 } };
  expect(JSON.parse((await pool.analyze(request)).toString())).toEqual({ results: [{ gateway_id: 'g1', jobs: [] }] });
  insertEvents(db, 'c', [scanRow('a', 'g1', 10, 'S1'), scanRow('b', 'g1', 20, 'E1')]);
  expect(JSON.parse((await pool.analyze(request)).toString())).toEqual({
    results: [{ gateway_id: 'g1', jobs: [{ start_time: 10, end_time: 20, start_event_id: 'a', end_event_id: 'b' }] }],
  });
  await pool.close();
});
