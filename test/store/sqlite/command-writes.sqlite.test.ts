// The connection that runs the writes of command delivery (src/store/sqlite/command-writes.ts)
// keeps its temporary files in memory: each write's savepoint journal spilled to a temporary file
// past 64 KiB (bench/README.md "commands", session 37).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCommandWrites } from '../../../src/store/sqlite/command-writes.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';

const GW = 'aaaaaaaa-0000-4000-8000-000000000001';
let dir: string;
let db: Db;

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a group of writes runs with the temporary store in memory (2), the connection left so', () => {
  dir = mkdtempSync(join(tmpdir(), 'scanhub-command-writes-'));
  db = openDatabase(join(dir, 'scanhub.db'));
  expect(db.pragma('temp_store', { simple: true })).toBe(0);
  const done = runCommandWrites(db, [{ kind: 'claim', requests: [{ gateway_id: GW, exclude: [], limit: 16 }], now: 1_800_000_000_000 }]);
  expect(done).toEqual({ results: [{ result: [[]] }], told: [] });
  expect(db.pragma('temp_store', { simple: true })).toBe(2);
});
