import { TaskPool } from '../../threads/task-pool.js';
import { runCommandWrite, type CommandWrite } from './command-writes.js';
import type { Db } from './open.js';

/** A thread left without work stops after this long; the next write starts a new one. */
const IDLE_MS = 30_000;

/**
 * Runs the writes of command delivery (claims, PUBACKs, responses, expiry) in a worker thread with
 * its own connection, as the event deleter does (event-deleter.ts): each waits for the write lock
 * while the ingest writer commits, which on the server's thread would stall HTTP, TLS and MQTT, and
 * with them ingest (bench/README.md "commands"). Writes run one at a time, in order. An in-memory
 * database cannot be shared with a thread: its writes run inline.
 */
export class CommandWriter {
  private readonly pool: TaskPool<CommandWrite, unknown>;

  constructor(private readonly db: Db) {
    this.pool = new TaskPool({
      script: { from: import.meta.url, relative: './command-writer-worker.js' },
      workerData: { file: db.name },
      size: 1,
      idleMs: IDLE_MS,
      failed: 'writing commands failed',
      stopped: 'the command writer thread stopped',
      closed: 'the command writer is closed',
    });
  }

  run<R>(write: CommandWrite): Promise<R> {
    if (this.db.memory) return Promise.resolve(runCommandWrite(this.db, write) as R);
    return this.pool.run(write) as Promise<R>;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
