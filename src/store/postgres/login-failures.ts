import type { AuditEntry } from '../../domain/audit.js';
import type { LoginFailureRepository } from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import { ADVISORY_LOCKS } from './locks.js';
import type { Database } from './pool.js';

/** Refused log-ins in the login_failures table (migration 0003), counted by every instance alike. */
export class PgLoginFailures implements LoginFailureRepository {
  constructor(private readonly db: Database) {}

  async since(key: string, since: number): Promise<number[]> {
    const { rows } = await this.db.query<{ at: number }>('SELECT at FROM login_failures WHERE lockout_key = $1 AND at > $2 ORDER BY at', [key, since]);
    return rows.map((row) => row.at);
  }

  record(key: string, at: number, forgetUpTo: number, audit: AuditEntry[] = [], lock?: { refusals: number; entry: AuditEntry }): Promise<number> {
    return this.db.transaction(async (client) => {
      // One refusal of a key at a time (every instance): each counts the ones committed before it.
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADVISORY_LOCKS['login-failures'], key]);
      await client.query('DELETE FROM login_failures WHERE at <= $1', [forgetUpTo]);
      await client.query('INSERT INTO login_failures (lockout_key, at) VALUES ($1, $2)', [key, at]);
      const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM login_failures WHERE lockout_key = $1', [key]);
      const count = rows[0]!.count;
      for (const entry of lock && count === lock.refusals ? [...audit, lock.entry] : audit) await insertAuditEntry(client, entry);
      return count;
    });
  }
}
