import type { AuditEntry } from '../../domain/audit.js';

/** A gateway as stored. `thing_name` is not stored: it equals `id`. */
export interface GatewayRecord {
  id: string;
  customer_id: string;
  name: string;
  usecase: string;
  station: string;
  type: string;
  model: string | null;
  manufacturer: string | null;
  firmware: string | null;
  /** Bumped on every change of the editable fields; the ETag. */
  version: number;
  /** When prepare-provisioning ran, or null. */
  provisioning_prepared: number | null;
  /** When the last MQTT message from the gateway arrived, or null. */
  last_message: number | null;
  /** When revoke-certificate left the gateway without a usable certificate, until it is re-provisioned; or null. */
  certificate_revoked: number | null;
  /** When reprovision ran, until the device redeems the new token; or null. */
  reprovisioned: number | null;
  deleted: number | null;
  created: number;
  last_updated: number;
}

export interface NewGateway {
  id: string;
  name: string;
  usecase: string;
  station: string;
}

export type GatewayChanges = Partial<Pick<GatewayRecord, 'name' | 'usecase' | 'station'>>;

export type UpdateOutcome = GatewayRecord | 'missing' | 'stale' | 'name-taken';

/** Thrown when names are taken, so the whole unit of work is undone. */
export class GatewayNameTaken extends Error {
  constructor(readonly names: string[]) {
    super(`gateway name${names.length === 1 ? '' : 's'} already taken: ${names.map((n) => JSON.stringify(n)).join(', ')}`);
    this.name = 'GatewayNameTaken';
  }
}

/** Gateways; a deleted one (soft delete) is seen by byThingName only. */
export interface GatewayRepository {
  /** The customer's live gateway with this id (= thing name), case-insensitively. */
  byId(customerId: string, id: string): Promise<GatewayRecord | undefined>;
  /** Any gateway with this thing name, deleted ones included. */
  byThingName(thingName: string): Promise<GatewayRecord | undefined>;
  /** Which of the names the customer's live gateways use. */
  takenNames(customerId: string, names: string[]): Promise<string[]>;
  /** Creates all or none; throws GatewayNameTaken. */
  createAll(customerId: string, gateways: NewGateway[], now: number, audit?: AuditEntry[]): Promise<GatewayRecord[]>;
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<GatewayRecord[]>;
  /** Applies the changes when the stored version is one of `expectedVersions` (any when undefined), bumping it. */
  update(customerId: string, id: string, changes: GatewayChanges, expectedVersions: number[] | undefined, now: number): Promise<UpdateOutcome>;
  /** Soft-deletes the gateway and sends `gateway-deleted`; false when there was no live one. */
  markDeleted(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<boolean>;
}
