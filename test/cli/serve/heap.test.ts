// `serve` tunes V8's collector at start (src/cli/serve/heap.ts, docs/operations.md "Tuning"): the
// flags are ones this node knows, serve applies them, and leaves one given on node's command line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVE_HEAP_FLAGS } from '../../../src/cli/serve/heap.js';
import { freePort, spawnServe, stop } from '../../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../../helpers/test-store.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `node ...nodeArgs bin/scanhub.js serve` at debug level until it serves, then SIGTERM; its JSON log lines. */
async function serveLog(nodeArgs: string[]): Promise<Record<string, unknown>[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-heap-'));
  const database: TestDatabase = await testDatabase();
  cleanups.push(async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env = { SCANHUB_ADMIN_PASSWORD: 'admin-password-123', SCANHUB_LOG_LEVEL: 'debug', SCANHUB_LOG_FORMAT: 'json' };
  const serve = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', '0'], env, database, nodeArgs);
  cleanups.push(async () => void (await stop(serve)));
  const drained = new Promise((resolve) => serve.child.stdout!.once('end', resolve));
  await serve.stderrMatches(/scanhub is serving/);
  expect((await stop(serve)).code).toBe(0);
  // 'exit' can come before the last of the pipe is read.
  await drained;
  return serve.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("serve's V8 heap settings", () => {
  it('are flags this node knows: node started with them runs, and says nothing', () => {
    const run = spawnSync(process.execPath, [...SERVE_HEAP_FLAGS, '-e', 'process.stdout.write("ran")'], { encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: 'ran', stderr: '' });
    // The check can fail: node refuses a flag it does not know.
    expect(spawnSync(process.execPath, ['--heap-growing-procent=300', '-e', '0'], { encoding: 'utf8' }).status).toBe(9);
  });

  it('are applied when serve starts, and logged at debug level', async () => {
    const lines = await serveLog([]);
    expect(lines.filter((line) => line.msg === 'V8 heap settings applied').map((line) => line.flags)).toEqual([[...SERVE_HEAP_FLAGS]]);
  });

  it("leave a flag given on node's command line as it was given", async () => {
    const lines = await serveLog(['--heap-growing-percent=50']);
    expect(lines.filter((line) => line.msg === 'V8 heap settings applied').map((line) => line.flags)).toEqual([
      ['--incremental-marking-soft-trigger=90', '--incremental-marking-hard-trigger=95'],
    ]);
  });
});
