import { statSync } from 'node:fs';
import type { EventRow } from '../../domain/events.js';
import type { IngestMessage } from '../../domain/ingest.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';
import {
  StoreUnavailable,
  type ApiKeyRepository,
  type AssetRepository,
  type AuditRepository,
  type CustomerRepository,
  type DeadLetterRepository,
  type EventLogRepository,
  type EventRepository,
  type ExportTaskRepository,
  type FeatureRepository,
  type GatewayCertificateRepository,
  type GatewayRepository,
  type IngestRepository,
  type JobAnalysisRepository,
  type JobConfigRepository,
  type LockRepository,
  type LoginFailureRepository,
  type NewUser,
  type ProvisioningRepository,
  type RetentionRepository,
  type SecretRepository,
  type Store,
  type StorePurpose,
  type StoreThread,
  type UserRepository,
} from '../ports/index.js';
import { LocalSignals } from '../shared/local-signals.js';
import { AssetStore } from './assets.js';
import { AuditStore, audited, insertAuditEntry } from './audit.js';
import { walCheckpointer } from './checkpointer.js';
import { CertificateStore } from './certificates.js';
import { CustomerStore } from './customers.js';
import { DeadLetterStore } from './dead-letters.js';
import { insertEvents } from './event-rows.js';
import { EventDeleter } from './event-deleter.js';
import { batchDeleter } from './event-deletion.js';
import { EventStore } from './events.js';
import { EventLogStore, isSqlitePosition } from './event-log.js';
import { ExportTaskStore } from './export-tasks.js';
import { FeatureStore } from './features.js';
import { GatewayStore } from './gateways.js';
import { createCommitter, type Committer } from './ingest-commit.js';
import { IngestStore, tuneForIngest } from './ingest.js';
import { JobAnalysisPool } from './job-analysis-pool.js';
import { analyzeStoredJobs } from './job-events.js';
import { JobConfigStore } from './job-configs.js';
import { LoginFailureStore } from './login-failures.js';
import { ApiKeyStore } from './api-keys.js';
import { openDatabase, type Db } from './open.js';
import { ProvisioningStore } from './provisioning.js';
import { RetentionStore } from './retention.js';
import { FileSecrets } from './secrets.js';
import { mapStorageFull, probeFileSystem } from './storage.js';
import { StorageWatch } from '../shared/storage-watch.js';
import { UserStore } from './users.js';

/** Where a SQLite store lives. */
export type SqliteLocator = { kind: 'sqlite'; file: string; dataDir: string };

/** The repositories that write: their "disk full" failures become StorageFull. */
const MAPPED_REPOSITORIES = [
  'customers',
  'users',
  'loginFailures',
  'audit',
  'apiKeys',
  'features',
  'gateways',
  'provisioning',
  'certificates',
  'events',
  'exportTasks',
  'jobConfigs',
  'assets',
] as const;
type MappedRepository = (typeof MAPPED_REPOSITORIES)[number];

/** Thrown inside a transaction to undo it when the e-mail of a new administrator is taken. */
class EmailTaken extends Error {}

/** The size of a file in bytes; 0 when it does not exist (no WAL between checkpoints and a close). */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** A value built on first use: a reader never prepares the ingest statements, and so on. */
function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/**
 * The SQLite store: synchronous better-sqlite3 inside, the async repositories of ports.ts outside.
 * Each method is one synchronous call (one transaction where it writes more than one row): its
 * `async` adds one resolved promise, never a wait on another thread (job analyses excepted).
 */
export class SqliteStore implements Store {
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
  /** One process per data directory: signals stay in it. */
  readonly signals = new LocalSignals();
  readonly storage: StorageWatch;
  private readonly pool: () => JobAnalysisPool;
  private poolStarted = false;
  private readonly deleter: () => EventDeleter;
  private deleterStarted = false;
  private closed = false;

  constructor(
    /** The connection: SQLite internals (tests, benches, the checkpointer hook) only. */
    readonly db: Db,
    readonly locator: SqliteLocator,
    /**
     * Delete old events on this connection, in the caller's thread: the ingest writer's store,
     * whose thread runs the batches between its commits. Otherwise they run in a thread of their own.
     */
    options: { deleteInline?: boolean } = {},
  ) {
    const customers = lazy(() => new CustomerStore(db));
    const users = lazy(() => new UserStore(db));
    const loginFailures = lazy(() => new LoginFailureStore(db));
    const audit = lazy(() => new AuditStore(db));
    const apiKeys = lazy(() => new ApiKeyStore(db));
    const features = lazy(() => new FeatureStore(db));
    const gateways = lazy(() => new GatewayStore(db));
    const provisioning = lazy(() => new ProvisioningStore(db));
    const certificates = lazy(() => new CertificateStore(db));
    const events = lazy(() => new EventStore(db));
    const eventLog = lazy(() => new EventLogStore(db));
    const ingest = lazy(() => new IngestStore(db));
    const commit = lazy((): Committer => createCommitter(ingest()));
    const exportTasks = lazy(() => new ExportTaskStore(db));
    const retention = lazy(() => new RetentionStore(db));
    const deleteInline = lazy(() => batchDeleter(db));
    this.deleter = lazy(() => ((this.deleterStarted = true), new EventDeleter(db)));
    const jobConfigs = lazy(() => new JobConfigStore(db));
    const assets = lazy(() => new AssetStore(db));
    const deadLetters = lazy(() => new DeadLetterStore(db));
    this.pool = lazy(() => ((this.poolStarted = true), new JobAnalysisPool(db)));

    const createWithAdmin = (id: string, admin: NewUser, now: number): 'created' | 'customer-exists' => {
      if (!customers().create(id, now)) return 'customer-exists';
      if (!users().create(admin)) throw new EmailTaken();
      return 'created';
    };
    this.customers = {
      exists: async (id) => customers().exists(id),
      count: async () => customers().count(),
      createWithAdmin: async (id, admin, now, audit) => {
        try {
          return audited(db, () => createWithAdmin(id, admin, now), (outcome) => (outcome === 'created' ? audit : undefined));
        } catch (error) {
          if (error instanceof EmailTaken) return 'email-taken';
          throw error;
        }
      },
      bootstrap: async (id, admin, now, audit) =>
        audited(
          db,
          () => {
            if (customers().count() > 0) return false;
            if (createWithAdmin(id, admin, now) !== 'created') throw new Error(`customer "${id}" could not be created on an empty deployment`);
            return true;
          },
          (created) => (created ? audit : undefined),
        ),
    };
    this.users = {
      create: async (user, audit) => audited(db, () => users().create(user), (created) => (created ? audit : undefined)),
      byId: async (id) => users().byId(id),
      byEmail: async (email) => users().byEmail(email),
      page: async (customerId, after, limit) => users().page(customerId, after, limit),
      delete: async (customerId, id, audit) => audited(db, () => users().delete(customerId, id), (outcome) => (outcome === 'deleted' ? audit : undefined)),
      update: async (customerId, id, changes, now, audit) => {
        const outcome = audited(db, () => users().update(customerId, id, changes, now), (done) => (typeof done === 'object' && audit ? audit(done) : undefined));
        return typeof outcome === 'object' ? outcome.after : outcome;
      },
      setPassword: async (id, hash, now) => void db.transaction(() => users().setPassword(id, hash, now)).immediate(),
      upgradePasswordHash: async (id, previous, upgraded) => users().upgradePasswordHash(id, previous, upgraded),
      issueInvitation: async (invitation, audit) =>
        audited(db, () => users().issueInvitation(invitation), (outcome) => (outcome === 'issued' ? audit : undefined)),
      redeemInvitation: async (tokenHash, hash, now, audit) =>
        audited(
          db,
          () => users().redeemInvitation(tokenHash, hash, now),
          (redeemed) => (redeemed && audit ? audit({ user: users().byId(redeemed.userId)!, kind: redeemed.kind }) : undefined),
        )?.userId,
    };
    this.loginFailures = {
      since: async (key, since) => loginFailures().since(key, since),
      record: async (key, at, forgetUpTo, audit = [], lock) =>
        audited(
          db,
          () => loginFailures().record(key, at, forgetUpTo),
          (count) => (lock && count === lock.refusals ? [...audit, lock.entry] : audit),
        ),
    };
    this.audit = {
      append: async (entry) => audit().append(entry),
      newestBefore: async (customerId, start, before, limit, action) => audit().newestBefore(customerId, start, before, limit, action),
    };
    this.apiKeys = {
      create: async (key, audit) => audited(db, () => apiKeys().create(key), (created) => (created ? audit : undefined)),
      byHash: async (keyHash) => apiKeys().byHash(keyHash),
      withCreator: async (keyHash) => apiKeys().withCreator(keyHash),
      page: async (customerId, after, limit) => apiKeys().page(customerId, after, limit),
      revoke: async (customerId, id, now, audit) =>
        audited(db, () => apiKeys().revoke(customerId, id, now), (revoked) => (revoked && audit ? audit(revoked) : undefined)) ? 'revoked' : 'missing',
      touch: async (id, now, staleAt) => apiKeys().touch(id, now, staleAt),
    };
    this.features = {
      list: async (customerId) => features().list(customerId),
      set: async (customerId, feature, enabled, properties, now, audit) =>
        audited(db, () => features().set(customerId, feature, enabled, properties, now), () => audit),
    };
    this.gateways = {
      byId: async (customerId, id) => gateways().byId(customerId, id),
      byThingName: async (thingName) => gateways().byThingName(thingName),
      takenNames: async (customerId, names) => gateways().takenNames(customerId, names),
      createAll: async (customerId, list, now, audit) => audited(db, () => gateways().createAll(customerId, list, now), () => audit),
      page: async (customerId, after, limit) => gateways().page(customerId, after, limit),
      update: async (customerId, id, changes, expected, now) => gateways().update(customerId, id, changes, expected, now),
      markDeleted: async (customerId, id, now, audit) => {
        const deleted = audited(db, () => gateways().markDeleted(customerId, id, now), (done) => (done ? audit : undefined));
        // Committed: the broker of this process closes the gateway's connection.
        if (deleted) this.signals.deliver({ kind: 'gateway-deleted', gateway_id: id.toLowerCase() });
        return deleted;
      },
    };
    this.provisioning = {
      prepare: async (customerId, preparation, now, audit) =>
        audited(db, () => provisioning().prepare(customerId, preparation, now), (outcome) => (outcome === 'prepared' ? audit : undefined)),
      pending: async (tokenHash, now) => provisioning().pending(tokenHash, now),
      redeem: async (tokenHash, now, replacement, audit) => {
        const outcome = audited(
          db,
          () => provisioning().redeem(tokenHash, now, replacement),
          (outcome) => (typeof outcome === 'object' && audit ? audit(outcome) : undefined),
        );
        if (typeof outcome === 'object') this.announceRevoked(outcome.gateway.id, outcome.revokedSerials);
        return outcome;
      },
      preparePackage: async (customerId, fresh, preparations, now, audit) =>
        db
          .transaction(() => {
            gateways().insert(customerId, fresh, now);
            for (const preparation of preparations) provisioning().record(customerId, preparation, now);
            for (const entry of audit ?? []) insertAuditEntry(db, entry);
          })
          .immediate(),
      purgeExpired: async (now) => provisioning().purgeExpired(now),
    };
    this.certificates = {
      current: async (customerId, gatewayId) => certificates().current(customerId, gatewayId),
      revoke: async (customerId, gatewayId, now, audit) => {
        const { outcome, revoked } = audited(
          db,
          () => certificates().revoke(customerId, gatewayId, now),
          ({ outcome }) => (typeof outcome === 'object' && audit ? audit(outcome) : undefined),
        );
        if (typeof outcome === 'object') this.announceRevoked(outcome.gateway_id, revoked);
        return outcome;
      },
      reprovision: async (customerId, preparation, now, audit) => {
        const { outcome, revoked } = audited(
          db,
          () => certificates().reprovision(customerId, preparation, now),
          ({ outcome }) => (outcome === 'reprovisioned' ? audit : undefined),
        );
        this.announceRevoked(preparation.gatewayId.toLowerCase(), revoked);
        return outcome;
      },
    };
    this.events = {
      newestBefore: async (customerId, start, before, limit, prefix) => events().newestBefore(customerId, start, before, limit, prefix),
      gatewayNewestBefore: async (customerId, gatewayId, start, before, limit, prefix) =>
        events().gatewayNewestBefore(customerId, gatewayId, start, before, limit, prefix),
      oldestAfter: async (customerId, after, end, limit) => events().oldestAfter(customerId, after, end, limit),
      csvAfter: async (customerId, after, end, limit, cells) => events().csvAfter(customerId, after, end, limit, cells),
      insert: async (customerId, rows: EventRow[]) => {
        const inserted = insertEvents(db, customerId, rows);
        // Committed: the live streams of this process read on.
        if (inserted > 0) this.signals.deliver({ kind: 'events-committed', customers: [customerId] });
        return inserted;
      },
    };
    this.eventLog = {
      head: async () => eventLog().head(),
      frontier: async () => eventLog().head(),
      after: async (customerId, after, limit, gatewayId) => eventLog().after(customerId, after, limit, gatewayId),
      isPosition: isSqlitePosition,
    };
    this.ingest = {
      connectingGateway: async (id, serial) => ingest().gateway(id, serial),
      // The whole batch in one synchronous transaction: one await per batch, none per event.
      commit: async (batch: IngestMessage[], window?: CreatedWindow) => commit()(batch, window),
    };
    this.exportTasks = {
      create: async (task, audit, maxPending) => audited(db, () => exportTasks().create(task, maxPending), (created) => (created ? audit : undefined)),
      byId: async (customerId, id) => exportTasks().byId(customerId, id),
      claim: async (owner, now, leaseMs) => exportTasks().claim(owner, now, leaseMs),
      renew: async (id, owner, until) => exportTasks().renew(id, owner, until),
      release: async (id, owner) => exportTasks().release(id, owner),
      releaseOrphaned: async () => exportTasks().releaseOrphaned(),
      succeed: async (id, owner, completed, rows, file) => exportTasks().succeed(id, owner, completed, rows, file),
      fail: async (id, owner, completed, failure) => exportTasks().fail(id, owner, completed, failure),
      expiredBy: async (cutoff) => exportTasks().expiredBy(cutoff),
      delete: async (id) => exportTasks().delete(id),
      keptFiles: async () => exportTasks().keptFiles(),
      countByStatus: async () => exportTasks().countByStatus(),
    };
    this.retention = {
      get: async (customerId) => retention().get(customerId),
      set: async (customerId, eventsDays, now, audit) => {
        audited(db, () => retention().set(customerId, eventsDays, now), (previous) => audit?.(previous));
        return retention().get(customerId);
      },
      periods: async () => retention().periods(),
      // In the writer thread, on the writer's connection; elsewhere off the caller's thread, where a
      // batch may wait for the writer's lock (event-deleter.ts).
      deleteEventsBefore: options.deleteInline
        ? async (customerId, cutoff, limit, after) => deleteInline()(customerId, cutoff, limit, after)
        : (customerId, cutoff, limit, after) => this.deleter().delete(customerId, cutoff, limit, after),
      recordDeletion: async (customerId, deletion) => retention().recordDeletion(customerId, deletion),
    };
    this.jobConfigs = {
      // One read transaction: the revision is the ETag of exactly this list.
      list: async (customerId) =>
        db.transaction(() => ({ revision: jobConfigs().revision(customerId), items: jobConfigs().list(customerId) }))(),
      byId: async (customerId, id) => jobConfigs().byId(customerId, id),
      create: async (customerId, id, fields, now) => jobConfigs().create(customerId, id, fields, now),
      update: async (customerId, id, changes, now, expected) => jobConfigs().update(customerId, id, changes, now, expected),
      delete: async (customerId, id) => jobConfigs().delete(customerId, id),
    };
    this.jobAnalysis = {
      analyze: (request) => (this.closed ? Promise.reject(new Error('the job analysis pool is closed')) : this.pool().analyze(request)),
      analyzeToObjects: async (request) => analyzeStoredJobs(db, request),
    };
    this.assets = {
      register: async (asset) => assets().register(asset),
      list: async (assetType) => assets().list(assetType),
      find: async (assetType, assetVersion) => assets().find(assetType, assetVersion),
      exists: async (assetType, assetVersion) => assets().exists(assetType, assetVersion),
      recordAgreement: async (agreement, audit) => audited(db, () => assets().recordAgreement(agreement), () => audit),
      agreements: async (customerId) => assets().agreements(customerId),
    };
    this.deadLetters = {
      list: async () => deadLetters().list(),
      payload: async (seq) => deadLetters().payload(seq),
    };
    this.secrets = new FileSecrets(locator.dataDir, db);
    // One process per data directory: nobody else can hold a lock, so the work always runs.
    this.locks = { tryRun: async (_name, work) => ({ ran: true, value: await work() }) };
    this.storage = new StorageWatch(() => probeFileSystem(locator.file));
    // A write refused for lack of space throws StorageFull (HTTP 507) and makes the store full until a probe succeeds.
    const refused = (reason: string) => this.storage.refused(reason);
    const mapped = this as unknown as Record<MappedRepository, object>;
    for (const name of MAPPED_REPOSITORIES) mapped[name] = mapStorageFull(mapped[name], locator.file, refused);
  }

  /** Committed revocations: the broker of this process closes the connections that use them. */
  private announceRevoked(gatewayId: string, serials: string[]): void {
    for (const serial of serials) this.signals.deliver({ kind: 'certificate-revoked', gateway_id: gatewayId, serial });
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
    this.closed = true;
    this.storage.close();
    if (this.poolStarted) await this.pool().close();
    if (this.deleterStarted) await this.deleter().close();
    if (this.db.open) this.db.close();
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

