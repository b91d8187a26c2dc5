import { GatewayNameTaken, type GatewayChanges, type GatewayRecord, type GatewayRepository, type NewGateway, type UpdateOutcome } from '../ports/index.js';
import type { AuditEntry } from '../../domain/audit.js';
import { audited } from './audit.js';
import { uniqueViolation, type Database, type Queryable } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';

export const GATEWAY_COLUMNS = `id, customer_id, name, usecase, station, type, model, manufacturer, firmware, version,
  provisioning_prepared, last_message, deleted, created, last_updated, certificate_revoked, reprovisioned`;

const isNameClash = (error: unknown) => uniqueViolation(error) === 'gateways_live_name';

/** Which of `names` the customer's live gateways use, in the order given. */
export async function takenNames(client: Queryable, customerId: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await client.query<{ name: string }>(
    'SELECT name FROM gateways WHERE customer_id = $1 AND deleted IS NULL AND name = ANY($2::text[])',
    [customerId, names],
  );
  const taken = new Set(rows.map((row) => row.name));
  return names.filter((n) => taken.has(n));
}

/** Inserts gateways inside the caller's transaction; throws GatewayNameTaken when a name is used. */
export async function insertGateways(client: Queryable, customerId: string, gateways: NewGateway[], now: number): Promise<GatewayRecord[]> {
  const taken = await takenNames(client, customerId, gateways.map((g) => g.name));
  if (taken.length) throw new GatewayNameTaken(taken);
  if (gateways.length === 0) return [];
  try {
    const { rows } = await client.query<GatewayRecord>(
      `INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated)
       SELECT id, $1, name, usecase, station, $2, $2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS g(id, name, usecase, station, n)
       ORDER BY n
       RETURNING ${GATEWAY_COLUMNS}`,
      [customerId, now, gateways.map((g) => g.id.toLowerCase()), gateways.map((g) => g.name), gateways.map((g) => g.usecase), gateways.map((g) => g.station)],
    );
    // RETURNING of INSERT ... SELECT follows the insertion order; sort by the request's order anyway.
    const byId = new Map(rows.map((row) => [row.id, row]));
    return gateways.map((g) => byId.get(g.id.toLowerCase())!);
  } catch (error) {
    // Two names equal within one request, or a concurrent writer in another process.
    if (isNameClash(error)) {
      const duplicates = gateways.map((g) => g.name).filter((n, i, all) => all.indexOf(n) !== i);
      throw new GatewayNameTaken(duplicates.length ? duplicates : gateways.map((g) => g.name));
    }
    throw error;
  }
}

/**
 * Gateways of all customers. Deleted gateways (soft delete: `deleted` set) are invisible to
 * every read except `byThingName`, which the broker uses to refuse their certificates.
 */
export class PgGateways implements GatewayRepository {
  constructor(private readonly db: Database) {}

  async byId(customerId: string, id: string): Promise<GatewayRecord | undefined> {
    return (
      await this.db.query<GatewayRecord>(`SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE id = $1 AND customer_id = $2 AND deleted IS NULL`, [
        id.toLowerCase(),
        customerId,
      ])
    ).rows[0];
  }

  async byThingName(thingName: string): Promise<GatewayRecord | undefined> {
    return (await this.db.query<GatewayRecord>(`SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE id = $1`, [thingName.toLowerCase()])).rows[0];
  }

  takenNames(customerId: string, names: string[]): Promise<string[]> {
    return takenNames(this.db, customerId, names);
  }

  createAll(customerId: string, gateways: NewGateway[], now: number, audit?: AuditEntry[]): Promise<GatewayRecord[]> {
    return audited(this.db, (client) => insertGateways(client, customerId, gateways, now), () => audit);
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<GatewayRecord[]> {
    const { rows } = await this.db.query<GatewayRecord>(
      `SELECT ${GATEWAY_COLUMNS} FROM gateways
       WHERE customer_id = $1 AND deleted IS NULL AND (created, id) > ($2, $3)
       ORDER BY created, id LIMIT $4`,
      [customerId, after?.created ?? -1, after?.id ?? '', limit],
    );
    return rows;
  }

  /** Compare (the row locked) and write in one transaction. */
  update(customerId: string, id: string, changes: GatewayChanges, expectedVersions: number[] | undefined, now: number): Promise<UpdateOutcome> {
    return this.db
      .transaction(async (client): Promise<UpdateOutcome> => {
        const current = (
          await client.query<GatewayRecord>(
            `SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE id = $1 AND customer_id = $2 AND deleted IS NULL FOR UPDATE`,
            [id.toLowerCase(), customerId],
          )
        ).rows[0];
        if (!current) return 'missing';
        if (expectedVersions !== undefined && !expectedVersions.includes(current.version)) return 'stale';
        const next = { ...current, ...changes };
        const { rows } = await client.query<GatewayRecord>(
          `UPDATE gateways SET name = $1, usecase = $2, station = $3, version = version + 1, last_updated = $4
           WHERE id = $5 AND version = $6 RETURNING ${GATEWAY_COLUMNS}`,
          [next.name, next.usecase, next.station, now, current.id, current.version],
        );
        return rows[0]!;
      })
      .catch((error: unknown) => {
        if (isNameClash(error)) return 'name-taken';
        throw error;
      });
  }

  /**
   * Soft-deletes the gateway: it disappears from the API, its certificate stops working, its name
   * is free again. The same statement sends the `gateway-deleted` signal, so every instance hears
   * it exactly when the deletion commits.
   */
  async markDeleted(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<boolean> {
    const result = await audited(this.db, (client) => client.query(
      `WITH deleted AS (
         UPDATE gateways SET deleted = $1, last_updated = $1, version = version + 1
         WHERE id = $2 AND customer_id = $3 AND deleted IS NULL
         RETURNING id)
       SELECT pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'gateway-deleted', 'gateway_id', id)::text) FROM deleted`,
      [now, id.toLowerCase(), customerId],
    ), (deleted) => (deleted.rowCount === 1 ? audit : undefined));
    return result.rowCount === 1;
  }
}
