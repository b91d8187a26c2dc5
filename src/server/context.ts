import type { IdTokens } from '../auth/idtoken.js';
import { Exporter } from '../export/exporter.js';
import type { Store } from '../store/ports.js';

/** Where the deployment is reachable and keeps its files. */
export interface ServerConfig {
  dataDir: string;
  /** Base URL that links and registration paths are built on, without a trailing slash. */
  publicUrl: string;
  mqttPublicHost: string;
  mqttPort: number;
}

/** Everything a route needs: the store, keys, the clock. Built once per server (or test). */
export interface ServerContext {
  /** Every repository (src/store/ports.ts); the caller opened it and closes it. */
  store: Store;
  config: ServerConfig;
  idTokens: IdTokens;
  /** HMAC key of signed download links. */
  linkKey: Buffer;
  /** Milliseconds since the epoch; tests inject their own. */
  clock: () => number;
  /** Runs export tasks in worker threads; started and stopped with the app (routes/exports.ts). */
  exporter: Exporter;
}

/** The context over an open store; the caller owns the store and keys. */
export function createContext(
  store: Store,
  config: ServerConfig,
  idTokens: IdTokens,
  linkKey: Buffer,
  clock: () => number = Date.now,
): ServerContext {
  return {
    store,
    config,
    idTokens,
    linkKey,
    clock,
    exporter: new Exporter({ store, dataDir: config.dataDir, clock }),
  };
}
