import type { AuditEntry } from '../../domain/audit.js';
import { GatewayNameTaken, type GatewayChanges, type GatewayRecord, type GatewayRepository, type NewGateway, type UpdateOutcome } from '../ports/index.js';
import type { LocalSignals } from '../shared/local-signals.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';

function isNameClash(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === 'SQLITE_CONSTRAINT_UNIQUE' && (e.message ?? '').includes('gateways.name');
}

/** Which of `names` the customer's gateways already use. */
function takenNames(db: Db, customerId: string, names: string[]): string[] {
  if (names.length === 0) return [];
  const rows = db
    .prepare('SELECT name FROM gateways WHERE customer_id = ? AND name IN (SELECT value FROM json_each(?))')
    .pluck()
    .all(customerId, JSON.stringify(names)) as string[];
  const taken = new Set(rows);
  return names.filter((n) => taken.has(n));
}

/** Inserts gateways; throws GatewayNameTaken when a name is used. Call inside a transaction for several. */
export function insertGateways(db: Db, customerId: string, gateways: NewGateway[], now: number): GatewayRecord[] {
  const taken = takenNames(db, customerId, gateways.map((g) => g.name));
  if (taken.length) throw new GatewayNameTaken(taken);
  const insert = db.prepare(
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

/**
 * Gateways of all customers. Deleted gateways (soft delete: `deleted` set) are invisible to
 * every read except `byThingName`, which the broker uses to refuse their certificates.
 */
export class SqliteGateways implements GatewayRepository {
  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {}

  async byId(customerId: string, id: string): Promise<GatewayRecord | undefined> {
    return this.live(customerId, id);
  }

  async byThingName(thingName: string): Promise<GatewayRecord | undefined> {
    return this.db.prepare('SELECT * FROM gateways WHERE id = ?').get(thingName.toLowerCase()) as GatewayRecord | undefined;
  }

  async takenNames(customerId: string, names: string[]): Promise<string[]> {
    return takenNames(this.db, customerId, names);
  }

  /** All the gateways or none (one IMMEDIATE transaction). */
  async createAll(customerId: string, gateways: NewGateway[], now: number, audit?: AuditEntry[]): Promise<GatewayRecord[]> {
    return audited(this.db, () => insertGateways(this.db, customerId, gateways, now), () => audit);
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<GatewayRecord[]> {
    return prepared(
      this.db,
      `SELECT * FROM gateways
       WHERE customer_id = @customerId AND deleted IS NULL AND (created, id) > (@created, @id)
       ORDER BY created, id ${LIMIT}`,
    ).all({ customerId, created: after?.created ?? -1, id: after?.id ?? '', limit }) as GatewayRecord[];
  }

  /** Compare and write are one transaction. */
  async update(customerId: string, id: string, changes: GatewayChanges, expectedVersions: number[] | undefined, now: number): Promise<UpdateOutcome> {
    return this.db
      .transaction((): UpdateOutcome => {
        const current = this.live(customerId, id);
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
  async markDeleted(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<boolean> {
    const deleted = audited(
      this.db,
      () =>
        this.db
          .prepare(
            `UPDATE gateways SET deleted = @now, last_updated = @now, version = version + 1, name = name || char(0) || id
             WHERE id = @id AND customer_id = @customerId AND deleted IS NULL`,
          )
          .run({ id: id.toLowerCase(), customerId, now }).changes === 1,
      (done) => (done ? audit : undefined),
    );
    // Committed: the broker of this process closes the gateway's connection.
    if (deleted) this.signals.deliver({ kind: 'gateway-deleted', gateway_id: id.toLowerCase() });
    return deleted;
  }

  /** The customer's live gateway with this id (= thing name), case-insensitively. */
  private live(customerId: string, id: string): GatewayRecord | undefined {
    return this.db
      .prepare('SELECT * FROM gateways WHERE id = ? AND customer_id = ? AND deleted IS NULL')
      .get(id.toLowerCase(), customerId) as GatewayRecord | undefined;
  }
}
