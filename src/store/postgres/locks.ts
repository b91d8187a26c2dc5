import type { LockName, LockOutcome, LockRepository } from '../ports/index.js';
import type { Database } from './pool.js';

/**
 * Every advisory lock key scanhub takes, in one place: a key is one bigint per database, shared
 * by all its clients, so two uses must never pick the same number.
 */
export const ADVISORY_LOCKS = {
  /** Migrations at start-up (migrations/index.ts): one process migrates, the others wait. */
  migrations: 736301,
  /** Bootstrap of an empty deployment (users.ts), transaction-scoped. */
  bootstrap: 736302,
  /** The export file sweeper (src/export/exporter.ts): one instance sweeps at a time. */
  'export-sweep': 736303,
  /** Refused log-ins of one e-mail (login-failures.ts), transaction-scoped, two-key form with hashtext(key). */
  'login-failures': 736304,
  /** Deletion of old events (src/retention/sweeper.ts): one instance deletes at a time. */
  retention: 736305,
  /** Replacement of one secret (secrets.ts), transaction-scoped, two-key form with hashtext(name). */
  secrets: 736306,
} as const satisfies Record<'migrations' | 'bootstrap' | 'login-failures' | 'secrets' | LockName, number>;

/**
 * Clean-ups on one instance at a time: `pg_try_advisory_lock` on a connection of its own, held
 * while the work runs (the work's statements use other connections of the pool), then unlocked.
 * Not taken: the work is left to the instance that holds it. A connection that dies releases its
 * locks with its session, so a dead instance never keeps one.
 */
export class PgLocks implements LockRepository {
  constructor(private readonly db: Database) {}

  tryRun<T>(name: LockName, work: () => Promise<T>): Promise<LockOutcome<T>> {
    const key = ADVISORY_LOCKS[name];
    return this.db.withClient(async (client, markBroken) => {
      const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [key]);
      if (!rows[0]!.taken) return { ran: false };
      try {
        return { ran: true, value: await work() };
      } finally {
        // A connection that could not unlock must not go back to the pool still holding the lock.
        await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((error: Error) => markBroken(error));
      }
    });
  }
}
