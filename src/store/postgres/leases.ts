import type { LeaseRepository } from '../ports/index.js';
import type { Database } from './pool.js';

/** Milliseconds of the database's clock: every instance measures leases (and presence.ts its expiry) by the same one. */
export const NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * The leases table (migration 0015): a lease is taken when free or expired, renewed by its
 * holder; an instance that dies stops renewing, and another takes the lease once it expired.
 */
export class PgLeases implements LeaseRepository {
  constructor(private readonly db: Database) {}

  async claim(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const { rows } = await this.db.query<{ holder: string }>(
      `INSERT INTO leases (name, holder, expires) VALUES ($1, $2, ${NOW} + $3)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
       WHERE leases.holder = excluded.holder OR leases.expires < ${NOW}
       RETURNING holder`,
      [name, holder, ttlMs],
    );
    return rows.length === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.db.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
  }
}
