import type { Db } from './open.js';
import { GatewayNameTaken, type GatewayChanges, type GatewayRecord, type NewGateway, type UpdateOutcome } from '../ports/index.js';
import { LIMIT, prepared } from './statements.js';

function isNameClash(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === 'SQLITE_CONSTRAINT_UNIQUE' && (e.message ?? '').includes('gateways.name');
}

/**
 * Gateways of all customers. Deleted gateways (soft delete: `deleted` set) are invisible to
 * every read except `byThingName`, which the broker uses to refuse their certificates.
 */
export class GatewayStore {
  constructor(private readonly db: Db) {}

  /** The customer's live gateway with this id (= thing name), case-insensitively. */
  byId(customerId: string, id: string): GatewayRecord | undefined {
    return this.db
      .prepare('SELECT * FROM gateways WHERE id = ? AND customer_id = ? AND deleted IS NULL')
      .get(id.toLowerCase(), customerId) as GatewayRecord | undefined;
  }

  /** Any gateway with this thing name, deleted ones included: for certificate checks. */
  byThingName(thingName: string): GatewayRecord | undefined {
    return this.db.prepare('SELECT * FROM gateways WHERE id = ?').get(thingName.toLowerCase()) as GatewayRecord | undefined;
  }

  /** Which of `names` the customer's gateways already use. */
  takenNames(customerId: string, names: string[]): string[] {
    if (names.length === 0) return [];
    const rows = this.db
      .prepare('SELECT name FROM gateways WHERE customer_id = ? AND name IN (SELECT value FROM json_each(?))')
      .pluck()
      .all(customerId, JSON.stringify(names)) as string[];
    const taken = new Set(rows);
    return names.filter((n) => taken.has(n));
  }

  /** Inserts gateways; throws GatewayNameTaken when a name is used. Call inside a transaction for several. */
  insert(customerId: string, gateways: NewGateway[], now: number): GatewayRecord[] {
    const taken = this.takenNames(customerId, gateways.map((g) => g.name));
    if (taken.length) throw new GatewayNameTaken(taken);
    const insert = this.db.prepare(
      `INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated)
       VALUES (@id, @customerId, @name, @usecase, @station, @now, @now) RETURNING *`,
    );
    try {
      return gateways.map((g) => insert.get({ ...g, id: g.id.toLowerCase(), customerId, now }) as GatewayRecord);
    } catch (error) {
      // Two names equal within one request, or a concurrent writer in another process.
      if (isNameClash(error)) throw new GatewayNameTaken(gateways.map((g) => g.name).filter((n, i, all) => all.indexOf(n) !== i));
      throw error;
    }
  }

  /** Creates all the gateways or none (one IMMEDIATE transaction). */
  createAll(customerId: string, gateways: NewGateway[], now: number): GatewayRecord[] {
    return this.db.transaction(() => this.insert(customerId, gateways, now)).immediate();
  }

  /** One page of the customer's live gateways in (created, id) order, after the given key. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): GatewayRecord[] {
    return prepared(
      this.db,
      `SELECT * FROM gateways
       WHERE customer_id = @customerId AND deleted IS NULL AND (created, id) > (@created, @id)
       ORDER BY created, id ${LIMIT}`,
    ).all({ customerId, created: after?.created ?? -1, id: after?.id ?? '', limit }) as GatewayRecord[];
  }

  /**
   * Applies the changes when the stored version is one of `expectedVersions` (any version when
   * undefined), bumping version and last_updated; compare and write are one transaction.
   */
  update(customerId: string, id: string, changes: GatewayChanges, expectedVersions: number[] | undefined, now: number): UpdateOutcome {
    return this.db
      .transaction((): UpdateOutcome => {
        const current = this.byId(customerId, id);
        if (!current) return 'missing';
        if (expectedVersions !== undefined && !expectedVersions.includes(current.version)) return 'stale';
        const next = { ...current, ...changes };
        try {
          return this.db
            .prepare(
              `UPDATE gateways SET name = @name, usecase = @usecase, station = @station,
                 version = version + 1, last_updated = @now
               WHERE id = @id AND version = @version RETURNING *`,
            )
            .get({ name: next.name, usecase: next.usecase, station: next.station, id: current.id, version: current.version, now }) as GatewayRecord;
        } catch (error) {
          if (isNameClash(error)) return 'name-taken';
          throw error;
        }
      })
      .immediate();
  }

  /**
   * Soft-deletes the gateway: it disappears from the API, its certificate stops working, and its
   * name is released for a new gateway (the stored name gets the id appended after a NUL, which
   * no API name may contain).
   */
  markDeleted(customerId: string, id: string, now: number): boolean {
    const result = this.db
      .prepare(
        `UPDATE gateways SET deleted = @now, last_updated = @now, version = version + 1, name = name || char(0) || id
         WHERE id = @id AND customer_id = @customerId AND deleted IS NULL`,
      )
      .run({ id: id.toLowerCase(), customerId, now });
    return result.changes === 1;
  }
}
