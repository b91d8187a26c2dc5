import { TaskPool } from '../../threads/task-pool.js';
import type { CommandWrite, CommandWriteRoute, CommandWritesDone } from '../ports/index.js';
import { writeError } from '../ports/index.js';
import type { LocalSignals } from '../shared/local-signals.js';
import { runCommandWrites } from './command-writes.js';
import type { Db } from './open.js';

/** A thread left without work stops after this long; the next write starts a new one. */
const IDLE_MS = 30_000;
/**
 * In the ingest writer thread, PUBACKs and responses alone wait this long for company (another
 * turn's, a claim, a creation): each group is a commit that writes every page it touched to the
 * WAL again, and the commands' and audit log's pages are shared by the writes of a short while.
 * Nobody waits on them but the gateway's PUBACK of a response.
 */
export const HOLD_MS = 50;
/** The writes that may wait (HOLD_MS); a claim or a creation has a caller waiting and goes at once, with them. */
const PATIENT: ReadonlySet<CommandWrite['kind']> = new Set(['delivered', 'respond']);

/**
 * Runs the writes of command delivery (claims, PUBACKs, responses, expiry) off the server's thread,
 * where waiting for the write lock while the ingest writer commits would stall HTTP, TLS and MQTT,
 * and with them ingest (bench/README.md "commands"). In `serve` they go to the ingest writer thread
 * (`route`), which runs them between its commits, as retention's deletions (docs/retention.md):
 * neither then waits for the other in SQLite's busy handler. Otherwise (the store alone: tests,
 * tools) a worker thread with its own connection runs them. The writes that arrive while some run
 * go together next, in one transaction and in order. An in-memory database cannot be shared with a
 * thread: its writes run inline.
 */
export class CommandWriter {
  private readonly pool: TaskPool<CommandWrite[], CommandWritesDone>;
  private queue: { write: CommandWrite; resolve: (result: unknown) => void; reject: (error: Error) => void }[] = [];
  private busy = false;
  private held: NodeJS.Timeout | undefined;
  /** Where the writes go instead of the worker thread (SqliteCommands.routeWrites). */
  route: CommandWriteRoute | undefined;

  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {
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
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (result: unknown) => void, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.busy || this.queue.length === 0) return;
    if (this.route && this.queue.every((q) => PATIENT.has(q.write.kind))) {
      this.held ??= setTimeout(() => {
        this.held = undefined;
        this.flush();
      }, HOLD_MS);
      return;
    }
    this.flush();
  }

  private flush(): void {
    if (this.busy || this.queue.length === 0) return;
    clearTimeout(this.held);
    this.held = undefined;
    this.busy = true;
    const batch = this.queue;
    this.queue = [];
    const writes = batch.map((b) => b.write);
    const ran = this.db.memory ? Promise.resolve().then(() => runCommandWrites(this.db, writes)) : this.route ? this.route(writes) : this.pool.run(writes);
    ran
      .then(
        ({ results, told }) => {
          // Committed: the webhooks given `command.status` messages are woken, then the callers answered.
          for (const id of told) this.signals.deliver({ kind: 'webhook-changed', webhook_id: id });
          results.forEach((r, i) => ('error' in r ? batch[i]!.reject(writeError(r.error)) : batch[i]!.resolve(r.result)));
        },
        (error: Error) => batch.forEach((b) => b.reject(error)),
      )
      .finally(() => {
        this.busy = false;
        this.next();
      });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
