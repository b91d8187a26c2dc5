import type { ApiKeyRepository } from './api-keys.js';
import type { AssetRepository } from './assets.js';
import type { AuditRepository } from './audit.js';
import type { CommandRepository } from './commands.js';
import type { GatewayCertificateRepository } from './certificates.js';
import type { DeviceRepository } from './devices.js';
import type { EventLogRepository } from './event-log.js';
import type { EventRepository } from './events.js';
import type { ExportTaskRepository } from './export-tasks.js';
import type { FeatureRepository } from './features.js';
import type { GatewayRepository } from './gateways.js';
import type { DeadLetterRepository, IngestRepository } from './ingest.js';
import type { JobAnalysisRepository, JobConfigRepository } from './jobs.js';
import type { LockRepository } from './locks.js';
import type { LeaseRepository } from './leases.js';
import type { PresenceRepository } from './presence.js';
import type { WebhookRepository } from './webhooks.js';
import type { AlertRepository } from './alerts.js';
import type { ProvisioningRepository } from './provisioning.js';
import type { RetentionRepository } from './retention.js';
import type { SecretRepository } from './secrets.js';
import type { SignalBus } from './signals.js';
import type { CustomerRepository, LoginFailureRepository, UserRepository } from './users.js';

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
 * No space to write (SQLite: SQLITE_FULL; PostgreSQL: SQLSTATE 53100 disk_full): nothing of the
 * unit of work was stored, and reads still work. A kind of StoreUnavailable, so that whatever
 * treats the database as failing treats this alike; HTTP answers 507 instead of 503. The message
 * names the file system or server that is full.
 */
export class StorageFull extends StoreUnavailable {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageFull';
  }
}

/** Whether the database can be written, as this process sees it: full from a write refused for lack of space until a probe write succeeds. */
export interface StorageStatus {
  /** Why the database cannot be written now, for /healthz; undefined while it can. */
  full(): string | undefined;
  /** A write was refused for lack of space (here, or in a thread of this process): probe until one succeeds. */
  refused(reason: string): void;
  /** Calls `listener` on each change (the reason when it became full, undefined when writable again); returns the unsubscribe. */
  onChange(listener: (full: string | undefined) => void): () => void;
}

/** A thread a store runs beside an ingest writer, as the broker's supervisor needs it. */
export interface StoreThread {
  /** Its name in logs and /healthz. */
  name: string;
  /** The compiled entry; it posts THREAD_READY when ready and exits on the message 'close'. */
  entry: URL;
  workerData: unknown;
  /** A message the thread posted: something to warn about, with its fields, and the reason when it says the disk is full. */
  warning(message: unknown): { fields: object; message: string; storageFull?: string };
}

/** Every repository over one database, opened by openStore (src/store/open.ts). */
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
  /** Scanners, kept by whatever stores events. */
  readonly devices: DeviceRepository;
  /** Commands to gateways, queued until delivered. */
  readonly commands: CommandRepository;
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
  /** Leases on work one instance does at a time, taken over when its holder dies (webhook deliveries). */
  readonly leases: LeaseRepository;
  /** Which gateways are connected to any instance (station_silent). */
  readonly presence: PresenceRepository;
  readonly webhooks: WebhookRepository;
  readonly alerts: AlertRepository;
  /** Whether writes are refused for lack of space (/healthz, ingest). */
  readonly storage: StorageStatus;
  /** Resolves when the database answers; rejects with StoreUnavailable saying why (for /healthz). */
  ping(): Promise<void>;
  /** Bytes on disk, for /metrics: SQLite the database file and its WAL; PostgreSQL `pg_database_size` (shared by every instance). */
  sizeBytes(): Promise<number>;
  /**
   * The threads this store needs beside an ingest writer, which the broker supervises (SQLite:
   * the WAL checkpointer, and this connection leaves checkpoints to it from now on); none on PostgreSQL.
   */
  ingestMaintenance(): StoreThread[];
  close(): Promise<void>;
}
