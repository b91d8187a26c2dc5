import { statSync } from 'node:fs';
import { StoreUnavailable, type Store, type StorePurpose, type StoreThread } from '../ports/index.js';
import { LocalSignals } from '../shared/local-signals.js';
import { StorageWatch } from '../shared/storage-watch.js';
import { SqliteApiKeys } from './api-keys.js';
import { SqliteAssets } from './assets.js';
import { SqliteAudit } from './audit.js';
import { SqliteCertificates } from './certificates.js';
import { walCheckpointer } from './checkpointer.js';
import { SqliteCustomers } from './customers.js';
import { SqliteDeadLetters } from './dead-letters.js';
import { SqliteCommands } from './commands.js';
import { SqliteDevices } from './devices.js';
import { SqliteEventLog } from './event-log.js';
import { SqliteEvents } from './events.js';
import { SqliteExportTasks } from './export-tasks.js';
import { SqliteFeatures } from './features.js';
import { SqliteGateways } from './gateways.js';
import { SqliteIngest, tuneForIngest } from './ingest.js';
import { SqliteJobAnalysis } from './job-analysis.js';
import { SqliteJobConfigs } from './job-configs.js';
import { SqliteLocks } from './locks.js';
import { SqliteLoginFailures } from './login-failures.js';
import { openDatabase, type Db } from './open.js';
import { SqliteProvisioning } from './provisioning.js';
import { SqliteRetention } from './retention.js';
import { FileSecrets } from './secrets.js';
import { SqliteLeases } from './leases.js';
import { SqlitePresence } from './presence.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteAlerts } from './alerts.js';
import { WebhookSecretBox } from '../shared/sealing.js';
import { mapStorageFull, probeFileSystem } from './storage.js';
import { SqliteUsers } from './users.js';

/** Where a SQLite store lives. */
export type SqliteLocator = { kind: 'sqlite'; file: string; dataDir: string };

/** The size of a file in bytes; 0 when it does not exist (no WAL between checkpoints and a close). */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/**
 * The SQLite store: every repository over one connection, each built on first use (a reader never
 * prepares the ingest statements, and so on). Each repository is synchronous better-sqlite3
 * inside and async outside: a method is one synchronous call (one transaction where it writes
 * more than one row), and its `async` adds one resolved promise, never a wait on another thread
 * (job analyses and, off the writer thread, deletions of old events excepted).
 */
export class SqliteStore implements Store {
  /** One process per data directory: signals stay in it. */
  readonly signals = new LocalSignals();
  readonly storage: StorageWatch;
  readonly secrets: FileSecrets;
  readonly locks = new SqliteLocks();
  readonly leases = new SqliteLeases();
  readonly presence = new SqlitePresence();
  private readonly built = new Map<string, object>();

  constructor(
    /** The connection: SQLite internals (tests, benches, the checkpointer) only. */
    readonly db: Db,
    readonly locator: SqliteLocator,
    private readonly options: { deleteInline?: boolean } = {},
  ) {
    this.secrets = new FileSecrets(locator.dataDir, db);
    this.storage = new StorageWatch(() => probeFileSystem(locator.file));
  }

  get customers() {
    return this.writing('customers', () => new SqliteCustomers(this.db));
  }
  get users() {
    return this.writing('users', () => new SqliteUsers(this.db));
  }
  get loginFailures() {
    return this.writing('loginFailures', () => new SqliteLoginFailures(this.db));
  }
  get audit() {
    return this.writing('audit', () => new SqliteAudit(this.db));
  }
  get apiKeys() {
    return this.writing('apiKeys', () => new SqliteApiKeys(this.db));
  }
  get features() {
    return this.writing('features', () => new SqliteFeatures(this.db));
  }
  get gateways() {
    return this.writing('gateways', () => new SqliteGateways(this.db, this.signals));
  }
  get provisioning() {
    return this.writing('provisioning', () => new SqliteProvisioning(this.db, this.signals));
  }
  get certificates() {
    return this.writing('certificates', () => new SqliteCertificates(this.db, this.signals));
  }
  get events() {
    return this.writing('events', () => new SqliteEvents(this.db, this.signals));
  }
  get devices() {
    return this.repository('devices', () => new SqliteDevices(this.db));
  }
  get commands() {
    return this.writing('commands', () => new SqliteCommands(this.db, this.signals));
  }
  get eventLog() {
    return this.repository('eventLog', () => new SqliteEventLog(this.db));
  }
  get ingest() {
    return this.repository('ingest', () => new SqliteIngest(this.db));
  }
  get exportTasks() {
    return this.writing('exportTasks', () => new SqliteExportTasks(this.db));
  }
  get retention() {
    return this.repository('retention', () => new SqliteRetention(this.db, this.options.deleteInline));
  }
  get jobConfigs() {
    return this.writing('jobConfigs', () => new SqliteJobConfigs(this.db));
  }
  get jobAnalysis() {
    return this.repository('jobAnalysis', () => new SqliteJobAnalysis(this.db));
  }
  get assets() {
    return this.writing('assets', () => new SqliteAssets(this.db));
  }
  get webhooks() {
    return this.writing('webhooks', () => new SqliteWebhooks(this.db, new WebhookSecretBox(this.secrets), this.signals));
  }
  get alerts() {
    return this.writing('alerts', () => new SqliteAlerts(this.db));
  }
  get deadLetters() {
    return this.repository('deadLetters', () => new SqliteDeadLetters(this.db));
  }

  async ping(): Promise<void> {
    try {
      this.db.prepare('SELECT 1').get();
    } catch (error) {
      throw new StoreUnavailable(`the database does not answer: ${(error as Error).message}`, { cause: error });
    }
  }

  async sizeBytes(): Promise<number> {
    return fileSize(this.locator.file) + fileSize(`${this.locator.file}-wal`);
  }

  ingestMaintenance(): StoreThread[] {
    return [walCheckpointer(this.db)];
  }

  async close(): Promise<void> {
    this.storage.close();
    // The analyses' pool is closed even when unused, so that it refuses work from now on.
    const retention = this.built.get('retention') as SqliteRetention | undefined;
    const commands = this.built.get('commands') as SqliteCommands | undefined;
    await Promise.all([this.jobAnalysis.close(), retention?.close(), commands?.close()]);
    if (this.db.open) this.db.close();
  }

  /** The repository of this name, built on first use. */
  private repository<T extends object>(name: string, build: () => T): T {
    let repository = this.built.get(name);
    if (!repository) this.built.set(name, (repository = build()));
    return repository as T;
  }

  /** A repository that writes: a write refused for lack of space throws StorageFull (HTTP 507) and makes the store full until a probe succeeds. */
  private writing<T extends object>(name: string, build: () => T): T {
    return this.repository(name, () => mapStorageFull(build(), this.locator.file, (reason) => this.storage.refused(reason)));
  }
}

/** Opens the SQLite store of the locator for its purpose: the server migrates; ingest is tuned; a reader is read-only. */
export function openSqliteStore(locator: SqliteLocator, purpose: StorePurpose): SqliteStore {
  if (purpose === 'reader') {
    const db = openDatabase(locator.file, { readonly: true });
    // A reader (an export part) reads each page once, in order: a large page cache would only add to the RSS.
    db.pragma('cache_size = -2000');
    return new SqliteStore(db, locator);
  }
  if (purpose === 'server') return new SqliteStore(openDatabase(locator.file), locator);
  const db = openDatabase(locator.file, { migrate: false });
  // 20,000 pages = 80 MiB of WAL before the writer checkpoints itself (the checkpointer normally keeps up).
  tuneForIngest(db, 20_000);
  return new SqliteStore(db, locator, { deleteInline: true });
}
