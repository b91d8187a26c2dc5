import type { PresenceRepository } from '../ports/index.js';
import { mergeConnections } from '../shared/presence.js';
import { NOW } from './leases.js';
import type { Database } from './pool.js';

/** Rows of instances gone this long are deleted by the next publish: a dead instance leaves one row behind only for a while. */
const FORGOTTEN_MS = 3_600_000;

/**
 * The gateway_presence table (migration 0017): a row per instance with its connections as JSON
 * (`[[gateway_id, since], ...]`), replaced whole at each publish and read by the alert evaluator.
 */
export class PgPresence implements PresenceRepository {
  constructor(private readonly db: Database) {}

  async publish(instance: string, connections: ReadonlyMap<string, number>, ttlMs: number): Promise<void> {
    await this.db.query(
      `INSERT INTO gateway_presence (instance, connections, expires) VALUES ($1, $2, ${NOW} + $3)
       ON CONFLICT (instance) DO UPDATE SET connections = excluded.connections, expires = excluded.expires`,
      [instance, JSON.stringify([...connections]), ttlMs],
    );
    await this.db.query(`DELETE FROM gateway_presence WHERE expires < ${NOW} - $1`, [FORGOTTEN_MS]);
  }

  async withdraw(instance: string): Promise<void> {
    await this.db.query('DELETE FROM gateway_presence WHERE instance = $1', [instance]);
  }

  async connected(): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ connections: string }>(`SELECT connections FROM gateway_presence WHERE expires >= ${NOW}`);
    return mergeConnections(rows.map((row) => new Map(JSON.parse(row.connections) as [string, number][])));
  }
}
