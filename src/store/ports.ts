/**
 * The store seam: what the rest of scanhub may ask of a store. Routes, MQTT, exports, jobs and
 * operator commands import these interfaces only; `sqlite/` and `postgres/` implement them and are
 * the only code that touches a database driver. One method is one unit of work: no transaction
 * handle crosses the seam, so work that must be atomic across aggregates (a customer's bootstrap,
 * a provisioning package) is one method here.
 *
 * Both stores must give byte-identical answers for the same data (the contract tests in
 * test/store/ check it): the same keyset order (created, id), the same page tokens, the same
 * JSON bytes of an event page, the same CSV.
 *
 * The audit log (DESIGN.md "Trust"): a repository method that makes a change the audit log records
 * takes a trailing `audit?: AuditEntry` parameter and writes that entry in the same transaction as
 * the change. So no entry is lost and none describes a change that did not happen: a refused
 * change (a name clash, a 409, 'missing') writes no entry. A change of several things takes one
 * entry per thing (`AuditEntry[]`); one whose actor or customer the store learns only as it makes
 * it (a redeemed token) takes a function of what it learned (`AuditOf<T>`). `audit.append` is for
 * actions that change nothing else (a log-in).
 */
import type { AssetType } from '../domain/assets.js';
import type { AuditAction, AuditEntry, AuditKey } from '../domain/audit.js';
import type { CellMode } from '../domain/csv.js';
import type { CertificateStatus } from '../domain/gateway-certificates.js';
import type { EventRow } from '../domain/events.js';
import type { BatchResult, IngestMessage } from '../domain/ingest.js';
import type { GatewayJobs, JobBarcodes, TimeRange } from '../domain/job-analysis.js';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import type { RetentionDeletion, RetentionRecord } from '../domain/retention.js';
import type { StreamPosition } from '../domain/stream-cursor.js';

// ---------------------------------------------------------------------------------------------
// Where a store lives, and the failure every method may throw.

/** Where a store lives; threads are given this, never a driver handle. Plain data (crosses threads). */
export type StoreLocator =
  | { kind: 'sqlite'; /** The database file, absolute. */ file: string; /** The data directory (secrets, files). */ dataDir: string }
  | {
      kind: 'postgres';
      /** Any connection string node-postgres accepts (never validated with `new URL()`). */
      url: string;
      /** The master key (32 bytes) that encrypts the secrets stored in the database. */
      masterKey: Uint8Array;
    };

/** Why a store is opened: the server's main connection, an ingest writer, or a reader (exports, analyses). */
export type StorePurpose = 'server' | 'ingest' | 'reader';

/**
 * The database cannot be reached or failed as a whole (PostgreSQL down or restarting, I/O
 * error): nothing of the unit of work was stored. HTTP answers 503; ingest acknowledges nothing.
 */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}

/**
 * The database could not be written for lack of space (SQLite: SQLITE_FULL; PostgreSQL: SQLSTATE
 * 53100 disk_full): nothing of the unit of work was stored, and reads still work. A kind of
 * StoreUnavailable, so that whatever treats the database as failing treats this alike; HTTP
 * answers 507 instead of 503. The message names the file system or server that is full.
 */
export class StorageFull extends StoreUnavailable {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageFull';
  }
}

/**
 * Whether the database can be written, as this process sees it: full from the first write refused
 * for lack of space until a probe write (retried with a back-off) succeeds again.
 */
export interface StorageStatus {
  /** Why the database cannot be written now, for /healthz; undefined while it can. */
  full(): string | undefined;
  /** A write was refused for lack of space (here, or in a thread of this process): probe until one succeeds. */
  refused(reason: string): void;
  /** Calls `listener` each time the state changes (the reason when it became full, undefined when writable again); returns the unsubscribe. */
  onChange(listener: (full: string | undefined) => void): () => void;
}

// ---------------------------------------------------------------------------------------------
// Records.

export interface Consent {
  version: string;
  timestamp: number;
}

/** A user as stored; roles parsed, consents parsed. */
export interface UserRecord {
  id: string;
  customer_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  language: string | null;
  roles: string[];
  password_hash: string | null;
  consent_general_terms: Consent | null;
  consent_privacy_policy: Consent | null;
  created: number;
  last_updated: number;
  /**
   * Raised by every password set and change of roles; an IdToken carries the value it was issued
   * with and is refused once it differs (src/server/access.ts). 0 for every user at first.
   */
  session_version: number;
}

/** What PATCH /{customer_id}/users/{user_id} may change. */
export type UserChanges = Partial<Pick<UserRecord, 'first_name' | 'last_name' | 'language' | 'roles'>>;

/** A user before and after a change, for its audit entry. */
export interface UserUpdate {
  before: UserRecord;
  after: UserRecord;
}

/**
 * A single-use token with which a user sets a password (only its SHA-256 is stored): an
 * invitation is for a user without a password, a password reset for one with a password.
 */
export type InvitationKind = 'invitation' | 'password-reset';

export interface NewInvitation {
  tokenHash: string;
  userId: string;
  customerId: string;
  kind: InvitationKind;
  created: number;
  expiresAt: number;
}

/** Why no invitation was issued: no such user in the customer, or the user's password state does not fit the kind. */
export type InvitationOutcome = 'issued' | 'missing' | 'has-password' | 'no-password';

/** A redeemed invitation: the user as it is now, and the kind of token. */
export interface Redeemed {
  user: UserRecord;
  kind: InvitationKind;
}

export interface NewUser {
  id: string;
  customer_id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  language?: string | null;
  roles: string[];
  password_hash?: string | null;
  created: number;
}

export interface Feature {
  feature: string;
  enabled: boolean;
  additional_properties?: Record<string, unknown>;
}

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

/** A gateway as the broker sees it at connect: its customer, whether it was deleted, and the status of the presented certificate. */
export interface ConnectingGateway {
  id: string;
  customer_id: string;
  deleted: number | null;
  /**
   * The status of the certificate whose serial was asked about, of any gateway (domain/gateway-certificates.ts):
   * `pending` until its token was redeemed; null for a serial the store does not know.
   */
  certificate: CertificateStatus | null;
}

/**
 * A client certificate issued for a gateway. `sealedKey` is its private key while the device has
 * not fetched it, sealed under the provisioning token (src/pki/sealed-key.ts), which the store
 * keeps only as a hash; null for a key the device made itself, and once it was handed out.
 */
export interface IssuedGatewayCertificate {
  serial: string;
  commonName: string;
  certPem: string;
  sealedKey: Buffer | null;
  notAfter: number;
}

/** What prepare-provisioning stores: the certificate and the hash of the token that hands it out. */
export interface Preparation {
  gatewayId: string;
  certificate: IssuedGatewayCertificate;
  tokenHash: string;
  expiresAt: number;
}

export type PrepareOutcome = 'prepared' | 'missing' | 'already-prepared';

/** What a redeemed token yields: the gateway and the certificate handed out, with its sealed key when it was stored with one. */
export interface Redemption {
  gateway: GatewayRecord;
  certificate: IssuedGatewayCertificate;
  /**
   * Serials of the certificates the redemption revoked: those this one replaced (reprovision),
   * and the pending one when a replacement was handed out instead.
   */
  revokedSerials: string[];
}

/**
 * `key-missing`: the pending certificate has no sealed key (stored before keys were sealed; the
 * upgrade dropped it), so only a replacement can be handed out; the token stays unused.
 */
export type RedeemOutcome = Redemption | 'invalid' | 'gateway-gone' | 'key-missing';

/** A token that would redeem now: its gateway and the certificate it hands out. */
export interface PendingToken {
  gatewayId: string;
  serial: string;
}

/** A gateway's certificate as stored, without its key (DESIGN.md "Trust", "Gateway certificates"). */
export interface GatewayCertificate {
  /** Lower-case hex, as the certificate carries it. */
  serial: string;
  gateway_id: string;
  cert_pem: string;
  created: number;
  not_after: number;
  /** When the device redeemed the token that hands it out, or null (pending). */
  delivered_at: number | null;
  revoked: number | null;
  /** The serial of the certificate this one replaces (reprovision), or null for the first. */
  replaces: string | null;
}

/** The current certificate of a gateway, or why there is none: no such live gateway, or never prepared. */
export type CertificateLookup = GatewayCertificate | 'missing' | 'unprepared';

/** revoke-certificate: the current certificate, now revoked, or why nothing was revoked. */
export type RevokeOutcome = GatewayCertificate | 'missing' | 'unprepared' | 'already-revoked';

export type ReprovisionOutcome = 'reprovisioned' | 'missing' | 'unprepared';

/** Thrown when a gateway of a package cannot be prepared, so the whole package is undone. */
export class PreparationRefused extends Error {
  constructor(
    readonly gatewayId: string,
    readonly reason: Exclude<PrepareOutcome, 'prepared'>,
  ) {
    super(`gateway ${gatewayId} cannot be prepared: ${reason}`);
    this.name = 'PreparationRefused';
  }
}

/** An API key as stored (docs/api-keys.md): its hash, never the key. */
export interface ApiKeyRecord {
  id: string;
  customer_id: string;
  name: string;
  /** SHA-256 of the key, lower-case hex (src/auth/api-keys.ts). */
  key_hash: string;
  permissions: string[];
  created: number;
  /** The user who created it: the key acts as them. */
  created_by: string;
  expires_at: number | null;
  /** When the key last authenticated a request, to the minute; null before its first use. */
  last_used: number | null;
  revoked: number | null;
}

export type NewApiKey = Omit<ApiKeyRecord, 'last_used' | 'revoked'>;

/** A raw event row (as the export reads them): the values of EVENT_COLUMNS in order. */
export type RawEvent = (string | number | null)[];

/** Up to `limit` events, newest first, as JSON bytes the store built. */
export interface EventItems {
  /**
   * The prefix, then the items' JSON texts joined by commas, without members for absent fields
   * (members in EVENT_COLUMNS order, numbers as JSON.stringify writes them). A buffer of its own:
   * nobody else holds the bytes behind it (withText relies on it).
   */
  json: Buffer;
  count: number;
  /** More events follow in the range. */
  more: boolean;
  /** The keyset position of the last item, when there is one. */
  last?: CreatedIdKey;
}

/** Up to `limit` events, oldest first, as CSV records (src/domain/csv.ts) the store wrote. */
export interface CsvChunk {
  /** The records' bytes. */
  csv: Buffer;
  count: number;
  /** The keyset position of the last record, when there is one. */
  last?: CreatedIdKey;
}

export type ExportStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

/** An export task as stored. */
export interface ExportTaskRecord {
  id: string;
  customer_id: string;
  requested_by: string;
  start_time: number;
  end_time: number;
  /** How the file writes text cells. */
  cells: CellMode;
  status: ExportStatus;
  requested: number;
  completed: number | null;
  rows: number | null;
  /** The CSV, relative to the blob directory, while it is kept. */
  file: string | null;
  failure: string | null;
}

/** A task as a claim returns it: its lease is the claimant's. */
export interface ClaimedExportTask extends ExportTaskRecord {
  /** Claims of the task so far, this one included; a released claim (its server stopped on purpose) is not counted. */
  attempts: number;
}

export interface NewExportTask {
  id: string;
  customer_id: string;
  requested_by: string;
  start_time: number;
  end_time: number;
  cells: CellMode;
  requested: number;
}

/** A job configuration as stored and as the API shows it (spec 2.4). */
export interface JobConfig {
  job_config_id: string;
  job_name: string;
  created: number;
  last_updated: number;
  start_barcode: string;
  end_barcode: string;
  gateway_ids: string[];
  class: 'jobconfig';
  version: number;
}

export interface JobConfigFields {
  job_name: string;
  start_barcode: string;
  end_barcode: string;
  gateway_ids: string[];
}

/** Why a write was refused. */
export type JobConfigRefusal =
  | { refused: 'name-taken' }
  | { refused: 'unknown-gateway'; gateway_id: string }
  | { refused: 'missing' }
  | { refused: 'stale'; version: number };

/** Everything an analysis needs, as plain data (it crosses a worker boundary). */
export interface AnalysisRequest {
  gatewayIds: string[];
  barcodes: JobBarcodes;
  range: TimeRange;
}

/** A registered asset: a file of one type and version, governed by one EULA. Deployment-wide. */
export interface Asset {
  id: string;
  asset_type: AssetType;
  asset_version: string;
  file_name: string;
  file_size: number;
  /** SHA-256 of the file, lower-case hex (as sha256sum prints it). */
  file_sha256: string;
  eula_version: string;
  eula_text: string;
  /** SHA-256 of the EULA text, upper-case hex (spec 4.3). */
  eula_checksum: string;
  registered: number;
  /** The latest registered version of its type: what a download without asset_version gets. */
  default: boolean;
}

export type NewAsset = Omit<Asset, 'default'>;

/** Who agreed to which EULA to download which asset, and when. */
export interface Agreement {
  agreed_at: number;
  customer_id: string;
  user_id: string;
  agreed_by: string;
  asset_id: string;
  asset_type: string;
  asset_version: string;
  eula_version: string;
  eula_checksum: string;
}

/** A message kept for the operator instead of being stored (docs/gateways-mqtt.md "Quarantine"). */
export interface DeadLetter {
  gatewayId: string;
  received: number;
  quarantined: number;
  reason: string;
  payload: Uint8Array;
}

/** A dead letter as `scanhub operator dead-letters list` shows it: the payload by its size. */
export interface DeadLetterSummary {
  seq: number;
  gateway_id: string;
  customer_id: string | null;
  received: number;
  quarantined: number;
  reason: string;
  payload_bytes: number;
}

/** The secrets a deployment keeps (SQLite: files under the data directory; PostgreSQL: encrypted rows). */
export const SECRET_NAMES = ['pki/ca.key', 'pki/ca.crt', 'keys/idtoken.jwk', 'keys/links.key'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

// ---------------------------------------------------------------------------------------------
// Repositories, one per aggregate.

export interface CustomerRepository {
  exists(id: string): Promise<boolean>;
  count(): Promise<number>;
  /**
   * Creates the customer and its first administrator in one unit of work; 'customer-exists' or
   * 'email-taken' when refused (then nothing is stored).
   */
  createWithAdmin(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<'created' | 'customer-exists' | 'email-taken'>;
  /** On an empty deployment only: as createWithAdmin; false when any customer exists already. */
  bootstrap(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<boolean>;
}

export interface UserRepository {
  /** Inserts the user; false when the e-mail is taken (as normalisedEmail compares them, deployment-wide). */
  create(user: NewUser, audit?: AuditEntry): Promise<boolean>;
  byId(id: string): Promise<UserRecord | undefined>;
  /**
   * The user whose address equals this one as both stores compare them: domain/lockout.ts
   * normalisedEmail (ASCII letters case-insensitively, every other character exactly).
   */
  byEmail(email: string): Promise<UserRecord | undefined>;
  /** Users of the customer in (created, id) order after the key. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<UserRecord[]>;
  delete(customerId: string, id: string, audit?: AuditEntry): Promise<'deleted' | 'missing' | 'last-admin'>;
  /**
   * Changes the customer's user (a change of roles raises its session version); 'last-admin' (nothing
   * stored) when it would leave the customer without an ADMIN_ROLE user.
   */
  update(customerId: string, id: string, changes: UserChanges, now: number, audit?: AuditOf<UserUpdate>): Promise<UserRecord | 'missing' | 'last-admin'>;
  /** Sets the password (operator), raises the session version and voids the user's outstanding invitations. */
  setPassword(id: string, passwordHash: string, now: number): Promise<void>;
  /**
   * Replaces the hash by one of a higher cost for the same password (a log-in upgraded it) when it
   * is still `previous`; the session version stays. False when the password changed meanwhile.
   */
  upgradePasswordHash(id: string, previous: string, upgraded: string): Promise<boolean>;
  /**
   * Issues an invitation (the user must have no password) or a password reset (the user must have
   * one) and voids the user's earlier ones, in one transaction.
   */
  issueInvitation(invitation: NewInvitation, audit?: AuditEntry): Promise<InvitationOutcome>;
  /**
   * Sets the password of the user of an unused, unexpired token, uses the token up, voids the
   * user's other ones and raises the session version; the user's id, or undefined.
   */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number, audit?: AuditOf<Redeemed>): Promise<string | undefined>;
}

/**
 * Refused log-ins (DESIGN.md "Trust", "Brute force"), kept in the database so that every instance
 * of a scale-out deployment counts the same refusals. `key` is what domain/lockout.ts lockoutKey
 * makes: the user an address found, or the normalised address when it found none.
 */
export interface LoginFailureRepository {
  /** The times of the key's refusals after `since` (exclusive), oldest first. */
  since(key: string, since: number): Promise<number[]>;
  /**
   * Records a refusal of the key at `at`, forgets every refusal (of any key) at or before
   * `forgetUpTo`, and answers how many refusals of the key remain (this one included), counted in
   * the same transaction, serialized per key: concurrent refusals count 1, 2, 3, ... and never
   * the same number twice. Writes `audit` (the refusal) with it, and `lock.entry` when the count
   * is exactly `lock.refusals` (the refusal that starts a lock).
   */
  record(key: string, at: number, forgetUpTo: number, audit?: AuditEntry[], lock?: { refusals: number; entry: AuditEntry }): Promise<number>;
}

export type { AuditKey };
export type { RetentionDeletion, RetentionRecord };

/** Builds the entry of a change from what the store learned making it (the user of an invitation, the gateway of a token). */
export type AuditOf<T> = (subject: T) => AuditEntry;

/** One page of the audit log and whether more entries follow in its range. */
export interface AuditPage {
  entries: AuditEntry[];
  more: boolean;
}

/** The audit log (DESIGN.md "Trust"); entries of changes are written by the repositories that make them. */
export interface AuditRepository {
  /** Records an action that changes nothing else (a log-in, a refused log-in). */
  append(entry: AuditEntry): Promise<void>;
  /**
   * Up to `limit` entries of the customer with `start <= time` and `(time, id) < before`, newest
   * first, of one action when given.
   */
  newestBefore(customerId: string, start: number, before: AuditKey, limit: number, action?: AuditAction): Promise<AuditPage>;
}

/**
 * API keys. Names are unique among a customer's keys that are not revoked; revoked keys stay (as
 * rows) so that a revoked key is told from an unknown one, and are listed no more.
 */
export interface ApiKeyRepository {
  /** Inserts the key and writes `audit` with it; false (nothing stored) when a key of the customer that is not revoked has the name. */
  create(key: NewApiKey, audit?: AuditEntry): Promise<boolean>;
  /** The key with this hash, revoked and expired ones included. */
  byHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /**
   * The same with the user who created it (undefined once deleted), read together: what
   * authenticating a request needs, in one round trip (a key must cost no more than an IdToken).
   */
  withCreator(keyHash: string): Promise<{ key: ApiKeyRecord; creator: UserRecord | undefined } | undefined>;
  /** The customer's keys that are not revoked, in (created, id) order after the position. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<ApiKeyRecord[]>;
  /**
   * Revokes the customer's key at `now` and writes `audit` with it (built from the key, for its
   * name); 'missing' (nothing written) when it is unknown, another customer's, or revoked already.
   */
  revoke(customerId: string, id: string, now: number, audit?: AuditOf<ApiKeyRecord>): Promise<'revoked' | 'missing'>;
  /**
   * Sets last_used to `now` when it is null or at or before `staleAt`, in one conditional statement:
   * a key in steady use costs one write a minute, not one per request.
   */
  touch(id: string, now: number, staleAt: number): Promise<void>;
}

export interface FeatureRepository {
  list(customerId: string): Promise<Feature[]>;
  set(
    customerId: string,
    feature: string,
    enabled: boolean,
    properties: Record<string, unknown> | null | undefined,
    now: number,
    audit?: AuditEntry,
  ): Promise<Feature>;
}

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
  update(customerId: string, id: string, changes: GatewayChanges, expectedVersions: number[] | undefined, now: number): Promise<UpdateOutcome>;
  markDeleted(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<boolean>;
}

export interface ProvisioningRepository {
  /** Marks the gateway prepared and stores its certificate and token hash. */
  prepare(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<PrepareOutcome>;
  /** The gateway and pending certificate of a token that would redeem now (unused, unexpired, not revoked), without using it. */
  pending(tokenHash: string, now: number): Promise<PendingToken | undefined>;
  /**
   * Trades a token for its certificate (once): the token is used and the sealed key erased in one
   * unit of work. With `replacement` (a certificate of the device's own key, or of a fresh key for
   * a token whose key is missing) that certificate is stored, handed out and replaces the pending
   * one, which is revoked.
   */
  redeem(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined, audit?: AuditOf<Redemption>): Promise<RedeemOutcome>;
  /**
   * Erases the sealed keys of certificates whose token expired unused (the certificate stays,
   * pending, and the broker refuses a pending certificate); how many were erased.
   */
  purgeExpired(now: number): Promise<number>;
  /**
   * A provisioning package in one unit of work: creates the `fresh` gateways, then prepares every
   * preparation; throws GatewayNameTaken or PreparationRefused and then stores nothing.
   */
  preparePackage(customerId: string, fresh: NewGateway[], preparations: Preparation[], now: number, audit?: AuditEntry[]): Promise<void>;
}

/**
 * Revocation and re-provisioning of gateway certificates. The current certificate of a gateway is
 * the newest of its chain (each reprovision's certificate replaces the one before). Every
 * revocation sends `certificate-revoked` in its own transaction, so whichever instance holds the
 * connection closes it.
 */
export interface GatewayCertificateRepository {
  /** The current certificate of the customer's live gateway. */
  current(customerId: string, gatewayId: string): Promise<CertificateLookup>;
  /** Revokes every certificate of the gateway not yet revoked (and writes `audit` of the current one); 'already-revoked' when the current one was. */
  revoke(customerId: string, gatewayId: string, now: number, audit?: AuditOf<GatewayCertificate>): Promise<RevokeOutcome>;
  /**
   * Stores a new certificate replacing the current one, with its token: the current one keeps
   * working until the token is redeemed (then it is revoked); certificates never handed out are
   * revoked at once. The gateway counts as re-provisioning from now.
   */
  reprovision(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<ReprovisionOutcome>;
}

export interface EventRepository {
  /**
   * Up to `limit` events of the customer with `start <= created` and `(created, id) < before`,
   * newest first, their JSON after `prefix`.
   */
  newestBefore(customerId: string, start: number, before: CreatedIdKey, limit: number, prefix?: string): Promise<EventItems>;
  /** As newestBefore, for the events one gateway transmitted. */
  gatewayNewestBefore(customerId: string, gatewayId: string, start: number, before: CreatedIdKey, limit: number, prefix?: string): Promise<EventItems>;
  /** Up to `limit` raw events of the customer with `(created, id) > after` and `created < end`, oldest first. */
  oldestAfter(customerId: string, after: CreatedIdKey, end: number, limit: number): Promise<RawEvent[]>;
  /** The events oldestAfter reads, as CSV records of EVENT_COLUMNS with text cells as `cells` says (a chunk of an export). */
  csvAfter(customerId: string, after: CreatedIdKey, end: number, limit: number, cells: CellMode): Promise<CsvChunk>;
  /** Inserts events of the customer as given (tests, benches, migration); how many were new. */
  insert(customerId: string, rows: EventRow[]): Promise<number>;
}

/**
 * A position in the commit order of events (docs/events.md "Live events"): SQLite `[seq]`, the
 * rowid its one writer assigns in commit order; PostgreSQL `[tx, seq]`, the writing transaction's
 * id and the row's number in it. Positions compare element by element (comparePositions).
 */
export type { StreamPosition };

/** An event as the live stream sends it: its position and its JSON as the events list writes it. */
export interface CommittedEvent {
  position: StreamPosition;
  /** The event's JSON text, absent fields left out (the bytes of an item of GET /events). */
  json: string;
  gatewayId: string | null;
}

/** One read of the commit order. */
export interface EventLogRead {
  /** The customer's events after the position, in commit order. */
  events: CommittedEvent[];
  /**
   * How far the read got: every event of the customer up to here was returned (no event
   * committed later can come before it). At least the position read after.
   */
  reached: StreamPosition;
  /** The read stopped at its limit or its scan window: more may follow at once. */
  more: boolean;
}

/**
 * The events in commit order, for the live stream: no event is ever read before one committed
 * before it, so a reader that goes on from its position misses none and sees none twice.
 */
export interface EventLogRepository {
  /** Where a stream that starts now begins: nothing committed after this call comes before it. */
  head(): Promise<StreamPosition>;
  /** A position past every event committed so far (a cursor beyond it is not of this database's events). */
  frontier(): Promise<StreamPosition>;
  /** Up to `limit` events of the customer (of one gateway, when given) after the position. */
  after(customerId: string, after: StreamPosition, limit: number, gatewayId?: string): Promise<EventLogRead>;
  /** Whether the value has the shape of this store's positions (a cursor is text a client sends). */
  isPosition(value: unknown): value is StreamPosition;
}

export interface IngestRepository {
  /**
   * The gateway a client certificate names, deleted or not, and the status of the certificate of
   * this serial (lower-case hex); undefined when the gateway is unknown.
   */
  connectingGateway(id: string, serial: string): Promise<ConnectingGateway | undefined>;
  /**
   * One group commit (src/store/batch-plan.ts): parse, touch each gateway once (last_message),
   * apply reports, keep dead letters, insert events (one already stored is skipped), in one
   * transaction; a message the database refuses alone is INVALID without failing its neighbours.
   * Never throws: when the database fails, every message is FAILED (nothing is acknowledged).
   */
  commit(batch: IngestMessage[], window?: CreatedWindow): Promise<BatchResult>;
}

/**
 * Export tasks. A task is run by whoever holds its lease (DESIGN.md "Scale-out"): `claim` takes it,
 * `renew` keeps it, and the outcome is recorded only by the holder, so a task taken over after its
 * lease expired is completed exactly once. Lease times are wall-clock milliseconds.
 */
export interface ExportTaskRepository {
  /**
   * Stores a PENDING task, unless the customer has `maxPending` PENDING tasks already (counted in
   * the same transaction, so concurrent requests never pass the cap together): then undefined.
   */
  create(task: NewExportTask, audit?: AuditEntry, maxPending?: number): Promise<ExportTaskRecord | undefined>;
  /** The task if it belongs to the customer. */
  byId(customerId: string, id: string): Promise<ExportTaskRecord | undefined>;
  /**
   * Takes the oldest (requested, id) PENDING task whose lease is free or ended before `now`: the
   * lease becomes `owner`'s until `now + leaseMs` and its attempts grow by one, in one statement
   * (of callers racing, one gets each task). Undefined when no task is free.
   */
  claim(owner: string, now: number, leaseMs: number): Promise<ClaimedExportTask | undefined>;
  /** Extends the lease to `until` while `owner` holds it and the task is PENDING; false when the lease was lost. */
  renew(id: string, owner: string, until: number): Promise<boolean>;
  /** Gives the lease back without an outcome (the owner stops): the task is free at once and the attempt does not count. */
  release(id: string, owner: string): Promise<boolean>;
  /**
   * At start-up: frees the leases that no running process can hold. SQLite (one process per data
   * directory): every lease, since its holder died with the previous process. PostgreSQL: none, as
   * other instances may be running them; their leases expire. Returns how many were freed.
   */
  releaseOrphaned(): Promise<number>;
  /** Records success while `owner` holds the lease of the PENDING task; false (nothing recorded) otherwise. */
  succeed(id: string, owner: string, completed: number, rows: number, file: string): Promise<boolean>;
  /** Records failure while `owner` holds the lease of the PENDING task; false (nothing recorded) otherwise. */
  fail(id: string, owner: string, completed: number, failure: string): Promise<boolean>;
  /** Tasks completed (SUCCESSFUL or FAILED) at or before `cutoff`, with their file while one is kept. */
  expiredBy(cutoff: number): Promise<{ id: string; file: string | null }[]>;
  /** Deletes a completed task (the caller deleted its file first); a PENDING one stays. */
  delete(id: string): Promise<void>;
  /** Files of the tasks still kept, for telling them from stray files. */
  keptFiles(): Promise<Set<string>>;
  /** How many tasks are in each status now (every status named, 0 when none), for /metrics. */
  countByStatus(): Promise<Record<ExportStatus, number>>;
}

/** Periodic clean-ups that run on one instance at a time (their PostgreSQL keys: postgres/locks.ts). */
export type LockName = 'export-sweep' | 'retention';

/** What tryRun did: ran the work (and what it returned), or left it to the instance holding the lock. */
export type LockOutcome<T> = { ran: true; value: T } | { ran: false };

export interface LockRepository {
  /**
   * Runs `work` holding the named lock when no other process on the database holds it, and does
   * not run it when one does. PostgreSQL: a session advisory lock; SQLite (one process): always runs.
   */
  tryRun<T>(name: LockName, work: () => Promise<T>): Promise<LockOutcome<T>>;
}

/** What one batch of a deletion did. */
export interface DeletedBatch {
  deleted: number;
  /** The keyset position of the newest event it deleted (the next batch starts after it); absent when it deleted none. */
  last?: CreatedIdKey;
  /**
   * How long the batch held the writer, measured where it ran: SQLite from the moment BEGIN
   * IMMEDIATE held the write lock to the end of COMMIT; PostgreSQL the DELETE's round trip.
   */
  holdMs: number;
}

/**
 * Retention of events (DESIGN.md "Operations on one box"). The deletion itself is a series of
 * batches (src/retention/sweeper.ts sizes and paces them): each call deletes one batch in one
 * short transaction.
 */
export interface RetentionRepository {
  /** The customer's retention: events_days null and no deletion when never set. */
  get(customerId: string): Promise<RetentionRecord>;
  /** Sets the period (null: keep for ever) and writes `audit` (given the previous period) with it; the record as stored. */
  set(customerId: string, eventsDays: number | null, now: number, audit?: AuditOf<number | null>): Promise<RetentionRecord>;
  /** Every customer whose events are kept for a period, with the period. */
  periods(): Promise<{ customerId: string; eventsDays: number }[]>;
  /**
   * One batch: deletes up to `limit` of the customer's events with `created < cutoff` and
   * `(created, id) > after`, oldest first, in one transaction. A pass hands each batch the `last`
   * of the one before, so no batch walks again over what the previous ones deleted (PostgreSQL
   * keeps their index entries until VACUUM). SQLite: the ingest writer's store runs it on its
   * connection, in its thread (`serve` sends the batches there, between its commits); any other
   * store on a connection and thread of its own, so the caller's thread is never blocked.
   */
  deleteEventsBefore(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch>;
  /** Records the customer's last finished deletion pass. */
  recordDeletion(customerId: string, deletion: RetentionDeletion): Promise<void>;
}

export interface JobConfigRepository {
  /** The list and the revision (its ETag) from one snapshot. */
  list(customerId: string): Promise<{ revision: number; items: JobConfig[] }>;
  byId(customerId: string, id: string): Promise<JobConfig | undefined>;
  create(customerId: string, id: string, fields: JobConfigFields, now: number): Promise<JobConfig | JobConfigRefusal>;
  update(customerId: string, id: string, changes: Partial<JobConfigFields>, now: number, expectedVersion?: number): Promise<JobConfig | JobConfigRefusal>;
  delete(customerId: string, id: string): Promise<boolean>;
}

export interface JobAnalysisRepository {
  /** The analysis as the JSON body `{"results":[...]}` (GatewayJobs per gateway), off the main thread where the store can. */
  analyze(request: AnalysisRequest): Promise<Buffer>;
  /** The same as objects (tests, the CLI's checks). */
  analyzeToObjects?(request: AnalysisRequest): Promise<GatewayJobs[]>;
}

export interface AssetRepository {
  /** False when the type and version are registered already. */
  register(asset: NewAsset): Promise<boolean>;
  list(assetType?: string): Promise<Asset[]>;
  find(assetType: string, assetVersion?: string): Promise<Asset | undefined>;
  exists(assetType: string, assetVersion: string): Promise<boolean>;
  recordAgreement(agreement: Agreement, audit?: AuditEntry): Promise<void>;
  agreements(customerId?: string): Promise<Agreement[]>;
}

export interface DeadLetterRepository {
  list(): Promise<DeadLetterSummary[]>;
  payload(seq: number): Promise<Buffer | undefined>;
}

export interface SecretRepository {
  /** The secret, created with `create()` when missing; when two processes race, both get the first one stored. */
  getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string>;
  get(name: SecretName): Promise<string | undefined>;
  /**
   * Replaces the secret with `change(current)`, one replacement at a time (of two racing, the
   * second changes what the first stored), and writes the entries `audit` makes for the
   * deployment's customers with it (a deployment-wide change: one entry in each customer's log).
   * SQLite: the file is replaced (renamed over) inside the database transaction of the entries.
   */
  replace(name: SecretName, change: (current: string | undefined) => string, audit?: (customerIds: string[]) => AuditEntry[]): Promise<string>;
}

/** A store: every repository over one database, opened by openStore (src/store/open.ts). */
/**
 * What one instance tells every other (and itself): on PostgreSQL `NOTIFY scanhub` (DESIGN.md
 * "Scale-out"), on SQLite within the one process. Short field names: a NOTIFY payload is at most
 * 8,000 bytes.
 */
export type Signal =
  /** The gateway was deleted: whoever holds its MQTT connection closes it. Sent by the store with the deletion itself. */
  | { kind: 'gateway-deleted'; gateway_id: string }
  /** The certificate was revoked: whoever holds a connection of the gateway with it closes it. Sent by the store with the revocation. */
  | { kind: 'certificate-revoked'; gateway_id: string; serial: string }
  /** These gateways connected to `instance`: any other instance closes its older connection of each. */
  | { kind: 'gateways-connected'; instance: string; gateway_ids: string[] }
  /**
   * Events of these customers were committed (one signal per committed batch, at most
   * CUSTOMERS_PER_SIGNAL customers each): every instance's live streams of them read on. `through`
   * (PostgreSQL): a position the committed events all lie before; a read that has not reached it
   * yet waits for an older transaction still open, and tries again.
   */
  | { kind: 'events-committed'; customers: string[]; through?: StreamPosition };

/** Customers per `events-committed` signal: 100 ids of at most 64 characters stay well within NOTIFY's 8,000 bytes. */
export const CUSTOMERS_PER_SIGNAL = 100;

export interface SignalBus {
  /**
   * Hears every signal from now on, sent by any instance (this one too), until the returned
   * function is called. The first subscription starts listening.
   */
  subscribe(handler: (signal: Signal) => void): () => void;
  /** Sends a signal to every instance; resolves once the database took it. */
  publish(signal: Signal): Promise<void>;
  /**
   * Called each time listening resumes after a gap (the database restarted): signals sent
   * meanwhile were not heard, so holders of state check it again.
   */
  onResume(handler: () => void): () => void;
  /** Why signals of other instances cannot be heard now (for /healthz); undefined while listening. */
  fault(): string | undefined;
  /** Resolves once the bus hears signals (after the first subscription), at once within one process. */
  listening(): Promise<void>;
}

export interface Store {
  readonly locator: StoreLocator;
  /** Signals between instances (on SQLite, within this process). */
  readonly signals: SignalBus;
  readonly customers: CustomerRepository;
  readonly users: UserRepository;
  readonly loginFailures: LoginFailureRepository;
  readonly audit: AuditRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly features: FeatureRepository;
  readonly gateways: GatewayRepository;
  readonly provisioning: ProvisioningRepository;
  readonly certificates: GatewayCertificateRepository;
  readonly events: EventRepository;
  /** The events in commit order (the live stream). */
  readonly eventLog: EventLogRepository;
  readonly ingest: IngestRepository;
  readonly exportTasks: ExportTaskRepository;
  readonly retention: RetentionRepository;
  readonly jobConfigs: JobConfigRepository;
  readonly jobAnalysis: JobAnalysisRepository;
  readonly assets: AssetRepository;
  readonly deadLetters: DeadLetterRepository;
  readonly secrets: SecretRepository;
  readonly locks: LockRepository;
  /** Whether writes are refused for lack of space (/healthz, ingest). */
  readonly storage: StorageStatus;
  /** Resolves when the database answers; rejects with StoreUnavailable saying why (for /healthz). */
  ping(): Promise<void>;
  /**
   * The database's size on disk in bytes, for /metrics: SQLite the database file and its WAL;
   * PostgreSQL `pg_database_size` of the database (what every instance on it shares).
   */
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
}
