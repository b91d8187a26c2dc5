// BetweenCommits (src/store/sqlite/between-commits.ts): the server thread's small write
// transactions do not sleep the thread in SQLite's busy handler while another connection (the
// ingest writer thread) holds the write lock; they go in once it is free, a savepoint each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSignals } from '../../../src/store/shared/local-signals.js';
import { BetweenCommits } from '../../../src/store/sqlite/between-commits.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';

const dirs: string[] = [];
const open: Db[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Two connections to one new database file with a table `t`. */
function twoConnections(): [Db, Db] {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-between-commits-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'db.sqlite'));
  db.exec('CREATE TABLE t (x INTEGER NOT NULL)');
  const other = openDatabase(join(dir, 'db.sqlite'));
  open.push(db, other);
  return [db, other];
}

describe('BetweenCommits', () => {
  it('keeps the thread turning while another connection holds the write lock, and writes once it is released and a commit is heard of', async () => {
    const [db, other] = twoConnections();
    const signals = new LocalSignals();
    const writes = new BetweenCommits(db, signals);
    other.prepare('BEGIN IMMEDIATE').run();
    const started = performance.now();
    let written = false;
    const write = writes.run(() => db.prepare('INSERT INTO t (x) VALUES (1)').run()).then(() => (written = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A busy handler would have held the thread for the whole busy_timeout (5 s) before this timer.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(written).toBe(false);
    other.prepare('COMMIT').run();
    await signals.publish({ kind: 'events-committed', customers: [] });
    await write;
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(1);
  });

  it('rolls a write that fails back alone and writes the others of its turn', async () => {
    const [db] = twoConnections();
    const writes = new BetweenCommits(db, new LocalSignals());
    const results = await Promise.allSettled([
      writes.run(() => db.prepare('INSERT INTO t (x) VALUES (1)').run()),
      writes.run(() => {
        db.prepare('INSERT INTO t (x) VALUES (2)').run();
        db.prepare('INSERT INTO t (x) VALUES (NULL)').run();
      }),
      writes.run(() => db.prepare('INSERT INTO t (x) VALUES (3)').run()),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 3]);
  });
});
