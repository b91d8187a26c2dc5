/** Periodic clean-ups that run on one instance at a time (their PostgreSQL keys: postgres/locks.ts). */
export type LockName = 'export-sweep' | 'retention';

/** What tryRun did: ran the work (and what it returned), or left it to the instance holding the lock. */
export type LockOutcome<T> = { ran: true; value: T } | { ran: false };

export interface LockRepository {
  /** Runs `work` holding the named lock unless another process on the database holds it (PostgreSQL: a session advisory lock; SQLite: always runs). */
  tryRun<T>(name: LockName, work: () => Promise<T>): Promise<LockOutcome<T>>;
}
