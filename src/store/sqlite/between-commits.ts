import type { Transaction } from 'better-sqlite3';
import type { SignalBus } from '../ports/index.js';
import type { Db } from './open.js';

/** After this many tries that found the write lock taken, the writes wait for it in SQLite's busy handler as others do. */
const TRIES = 20;
/** The wait before trying again when no commit is heard of meanwhile. */
const RETRY_MS = 5;

interface Write {
  run: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One write transaction for the items, `write` run for each in a savepoint of its own: an item
 * whose write throws is rolled back alone and its error kept in `failures`. Made once per
 * connection: a transaction function made per call cost more than the writes it held.
 */
export function eachInSavepoint<T>(db: Db, write: (item: T) => void): Transaction<(items: readonly T[], failures: Map<T, unknown>) => void> {
  const one = db.transaction(write);
  return db.transaction((items: readonly T[], failures: Map<T, unknown>) => {
    for (const item of items) {
      try {
        one(item);
      } catch (error) {
        failures.set(item, error);
      }
    }
  });
}

/**
 * Small write transactions of the server's thread (the webhook deliveries' when no ingest writer
 * thread takes them, docs/webhooks.md "Delivery") that do not wait in
 * SQLite's busy handler: it sleeps the whole thread (MQTT, HTTP) while the ingest writer thread
 * holds the write lock. The writes of one turn go in one transaction, each in a savepoint of its
 * own; a transaction that finds the lock taken is tried again at the next `events-committed`
 * signal (SQLite: published on this thread right after a writer commit, before the writer gets
 * its next batch) or RETRY_MS later (the signal comes through this thread's event loop, after the
 * lock was freed, and the lock may be held by someone who announces nothing). A try that fails
 * costs about half of one that writes, and waiting for commits instead held the webhooks back (with
 * at most 4 successes unwritten per webhook then, docs/webhooks.md "Delivery").
 */
export class BetweenCommits {
  private queued: Write[] = [];
  private scheduled = false;
  private tries = 0;
  private hearing = false;
  /** The connection's own busy timeout (as the PRAGMA that puts it back), read once: only this class changes it. */
  private restore: string | undefined;
  private readonly all: Transaction<(writes: readonly Write[], failures: Map<Write, unknown>) => void>;
  private readonly flushSoon = () => this.flush();

  constructor(
    private readonly db: Db,
    private readonly signals: SignalBus,
  ) {
    this.all = eachInSavepoint(db, (write: Write) => write.run());
  }

  /** Runs `write` in a write transaction soon; resolves once it committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ run: write, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(this.flushSoon);
    });
  }

  private flush(): void {
    const writes = this.queued;
    const failures = new Map<Write, unknown>();
    const wait = this.tries < TRIES;
    try {
      this.transaction(writes, failures, wait);
    } catch (error) {
      if (wait && (error as { code?: string }).code === 'SQLITE_BUSY') {
        this.tries++;
        this.retry();
        return;
      }
      this.queued = [];
      this.settled();
      for (const write of writes) write.reject(error);
      return;
    }
    this.queued = [];
    this.settled();
    for (const write of writes) (failures.has(write) ? write.reject(failures.get(write)) : write.resolve());
  }

  /** One transaction for the writes; `wait` false: the lock taken fails it at once (SQLITE_BUSY). */
  private transaction(writes: Write[], failures: Map<Write, unknown>, wait: boolean): void {
    if (!wait) return this.all.immediate(writes, failures);
    // exec(), not pragma(): a PRAGMA sets the timeout while it is compiled (a statement prepared
    // once would not set it again), and exec() makes no statement object.
    const restore = (this.restore ??= `PRAGMA busy_timeout = ${this.db.pragma('busy_timeout', { simple: true }) as number}`);
    this.db.exec('PRAGMA busy_timeout = 0');
    try {
      this.all.immediate(writes, failures);
    } finally {
      this.db.exec(restore);
    }
  }

  /** Tries again at the next commit heard of, or RETRY_MS later, whichever comes first. */
  private retry(): void {
    let done = false;
    const again = () => {
      if (done) return;
      done = true;
      stop();
      clearTimeout(timer);
      this.flush();
    };
    // Within a signal's delivery a new subscription would hear that same signal: the timer only.
    const stop = this.hearing
      ? () => undefined
      : this.signals.subscribe((signal) => {
          if (signal.kind !== 'events-committed') return;
          this.hearing = true;
          try {
            again();
          } finally {
            this.hearing = false;
          }
        });
    const timer = setTimeout(again, RETRY_MS);
  }

  private settled(): void {
    this.tries = 0;
    this.scheduled = false;
  }
}
