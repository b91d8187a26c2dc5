import type { Store, StoreLocator, StorePurpose, StoreThread } from '../ports/index.js';
import { PgAssets } from './assets.js';
import { PgAudit } from './audit.js';
import { PgCertificates } from './certificates.js';
import { PgDeadLetters } from './dead-letters.js';
import { PgCommands } from './commands.js';
import { PgDevices } from './devices.js';
import { PgEvents } from './events.js';
import { PgEventLog } from './event-log.js';
import { PgExportTasks } from './export-tasks.js';
import { PgFeatures } from './features.js';
import { PgGateways } from './gateways.js';
import { PgIngest } from './ingest.js';
import { PgJobAnalysis } from './job-analysis.js';
import { PgJobConfigs } from './job-configs.js';
import { PgLocks } from './locks.js';
import { applyMigrations } from './migrations/index.js';
import { Database } from './pool.js';
import { StorageWatch } from '../shared/storage-watch.js';
import { PgProvisioning } from './provisioning.js';
import { PgRetention } from './retention.js';
import { PgSecrets } from './secrets.js';
import { PgWebhooks } from './webhooks.js';
import { PgLeases } from './leases.js';
import { PgPresence } from './presence.js';
import { PgAlerts } from './alerts.js';
import { WebhookSecretBox } from '../shared/sealing.js';
import { PgSignals } from './signals.js';
import { PgCustomers } from './customers.js';
import { PgUsers } from './users.js';
import { PgLoginFailures } from './login-failures.js';
import { PgApiKeys } from './api-keys.js';

export type PostgresLocator = Extract<StoreLocator, { kind: 'postgres' }>;

/** Applies the pending migrations on one connection of the pool (under the advisory lock). */
async function migrate(db: Database): Promise<string[]> {
  return db.withClient((client) => applyMigrations(client));
}

/**
 * The store on PostgreSQL: a pool sized for the purpose, migrated at open (once, however many
 * processes open together). Throws StoreUnavailable when the server cannot be reached.
 */
export async function openPostgresStore(locator: PostgresLocator, purpose: StorePurpose, options: { poolSize?: number } = {}): Promise<Store> {
  const db = new Database(locator.url, purpose, { max: options.poolSize });
  try {
    await migrate(db);
    return new PostgresStore(locator, db, purpose);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

class PostgresStore implements Store {
  readonly customers;
  readonly users;
  readonly loginFailures;
  readonly audit;
  readonly apiKeys;
  readonly features;
  readonly gateways;
  readonly provisioning;
  readonly certificates;
  readonly events;
  readonly devices;
  readonly commands;
  readonly eventLog;
  readonly ingest;
  readonly exportTasks;
  readonly retention;
  readonly jobConfigs;
  readonly jobAnalysis;
  readonly assets;
  readonly deadLetters;
  readonly secrets;
  readonly locks;
  readonly webhooks;
  readonly alerts;
  readonly leases;
  readonly presence;
  readonly signals;
  readonly storage: StorageWatch;
  private closing: Promise<void> | undefined;

  constructor(
    readonly locator: PostgresLocator,
    private readonly db: Database,
    purpose: StorePurpose,
  ) {
    this.customers = new PgCustomers(db);
    this.users = new PgUsers(db);
    this.loginFailures = new PgLoginFailures(db);
    this.audit = new PgAudit(db);
    this.apiKeys = new PgApiKeys(db);
    this.features = new PgFeatures(db);
    this.gateways = new PgGateways(db);
    this.provisioning = new PgProvisioning(db);
    this.certificates = new PgCertificates(db);
    this.events = new PgEvents(db);
    this.devices = new PgDevices(db);
    this.commands = new PgCommands(db);
    this.eventLog = new PgEventLog(db);
    this.ingest = new PgIngest(db);
    this.exportTasks = new PgExportTasks(db);
    this.retention = new PgRetention(db);
    this.jobConfigs = new PgJobConfigs(db);
    this.jobAnalysis = new PgJobAnalysis(db);
    this.assets = new PgAssets(db);
    this.deadLetters = new PgDeadLetters(db);
    this.secrets = new PgSecrets(db, locator.masterKey);
    this.locks = new PgLocks(db);
    this.webhooks = new PgWebhooks(db, new WebhookSecretBox(this.secrets));
    this.leases = new PgLeases(db);
    this.presence = new PgPresence(db);
    this.alerts = new PgAlerts(db);
    this.signals = new PgSignals(locator.url, db);
    this.storage = new StorageWatch(() => db.probeStorage());
    // A statement refused for lack of space throws StorageFull (HTTP 507) and makes the store full
    // until a probe succeeds. Only the server's store watches: an ingest writer reports its
    // refusals in its batch results, to the server's (IngestWriter), and a reader only reads.
    if (purpose === 'server') db.onStorageFull = (reason) => this.storage.refused(reason);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  async sizeBytes(): Promise<number> {
    const { rows } = await this.db.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return Number(rows[0]!.bytes);
  }

  /** PostgreSQL checkpoints on its own. */
  ingestMaintenance(): StoreThread[] {
    return [];
  }

  close(): Promise<void> {
    this.storage.close();
    this.closing ??= this.signals.close().then(() => this.db.close());
    return this.closing;
  }
}
