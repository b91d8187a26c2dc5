import type { IdTokens } from '../auth/idtoken.js';
import type { Db } from '../store/open.js';
import { AssetStore } from '../store/assets.js';
import { Exporter } from '../export/exporter.js';
import { CustomerStore } from '../store/customers.js';
import { EventStore } from '../store/events.js';
import { ExportTaskStore } from '../store/export-tasks.js';
import { FeatureStore } from '../store/features.js';
import { GatewayStore } from '../store/gateways.js';
import { JobAnalysisPool } from '../store/job-analysis-pool.js';
import { JobConfigStore } from '../store/job-configs.js';
import { ProvisioningStore } from '../store/provisioning.js';
import { UserStore } from '../store/users.js';

/** Where the deployment is reachable and keeps its files. */
export interface ServerConfig {
  dataDir: string;
  /** Base URL that links and registration paths are built on, without a trailing slash. */
  publicUrl: string;
  mqttPublicHost: string;
  mqttPort: number;
}

/** Everything a route needs: stores, keys, the clock. Built once per server (or test). */
export interface ServerContext {
  db: Db;
  config: ServerConfig;
  idTokens: IdTokens;
  /** HMAC key of signed download links. */
  linkKey: Buffer;
  /** Milliseconds since the epoch; tests inject their own. */
  clock: () => number;
  customers: CustomerStore;
  users: UserStore;
  features: FeatureStore;
  events: EventStore;
  exportTasks: ExportTaskStore;
  /** Runs export tasks in worker threads; started and stopped with the app (routes/exports.ts). */
  exporter: Exporter;
  gateways: GatewayStore;
  provisioning: ProvisioningStore;
  jobConfigs: JobConfigStore;
  assets: AssetStore;
  /** Job analyses, run in worker threads on their own read-only connections. */
  jobAnalysis: JobAnalysisPool;
}

/** The context over an open database; the caller owns the database and keys. */
export function createContext(
  db: Db,
  config: ServerConfig,
  idTokens: IdTokens,
  linkKey: Buffer,
  clock: () => number = Date.now,
): ServerContext {
  const exportTasks = new ExportTaskStore(db);
  return {
    db,
    config,
    idTokens,
    linkKey,
    clock,
    customers: new CustomerStore(db),
    users: new UserStore(db),
    features: new FeatureStore(db),
    events: new EventStore(db),
    exportTasks,
    exporter: new Exporter({ db, dataDir: config.dataDir, tasks: exportTasks, clock }),
    gateways: new GatewayStore(db),
    provisioning: new ProvisioningStore(db),
    jobConfigs: new JobConfigStore(db),
    assets: new AssetStore(db),
    jobAnalysis: new JobAnalysisPool(db),
  };
}
