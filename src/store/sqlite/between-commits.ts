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
 * Small write transactions of the server's thread (the webhook deliveries') that do not wait in
 * SQLite's busy handler: it sleeps the whole thread (MQTT, HTTP) while the ingest writer thread
 * holds the write lock. The writes of one turn go in one transaction, each in a savepoint of its
 * own; a transaction that finds the lock taken is tried again at the next `events-committed`
 * signal (SQLite: published on this thread right after a writer commit, before the writer gets
 * its next batch) or RETRY_MS later.
 */
export class BetweenCommits {
  private queued: Write[] = [];
  private scheduled = false;
  private tries = 0;
  private hearing = false;
  private timeout: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly signals: SignalBus,
  ) {}

  /** Runs `write` in a write transaction soon; resolves once it committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ run: write, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
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
    // The connection's own timeout, read once: only this class changes it, and puts it back.
    const timeout = (this.timeout ??= this.db.pragma('busy_timeout', { simple: true }) as number);
    if (wait) this.db.pragma('busy_timeout = 0');
    try {
      this.db
        .transaction(() => {
          for (const write of writes) {
            try {
              this.db.transaction(write.run)();
            } catch (error) {
              failures.set(write, error);
            }
          }
        })
        .immediate();
    } finally {
      if (wait) this.db.pragma(`busy_timeout = ${timeout}`);
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
