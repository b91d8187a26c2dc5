import type { IdTokens } from '../auth/idtoken.js';
import type { ScryptCost } from '../auth/passwords.js';
import type { CertificateAuthority } from '../pki/ca.js';
import type { KeyType } from '../pki/keys.js';
import type { Exporter } from '../export/exporter.js';
import type { RetentionSweeper } from '../retention/sweeper.js';
import type { LiveEvents } from './live-events/live-events.js';
import type { Store } from '../store/ports/index.js';

/** Where the deployment is reachable and keeps its files. */
export interface ServerConfig {
  /** What is local to this process (the MQTT server's certificate). */
  dataDir: string;
  /** Export files, asset files and provisioning packages: shared by every instance (`--blob-dir`). */
  blobDir: string;
  /** Base URL that links and registration paths are built on, without a trailing slash. */
  publicUrl: string;
  mqttPublicHost: string;
  mqttPort: number;
  /** The key type of new gateway certificates (`serve --gateway-key-type`). */
  gatewayKeyType: KeyType;
  /**
   * The scrypt cost of new password hashes: DEFAULT_SCRYPT_COST in every `serve`; only the
   * in-process test server lowers it. A log-in with a hash of a lower cost hashes it again.
   */
  passwordCost: ScryptCost;
  /** `serve --webhook-allow-loopback`: webhook URLs may name loopback addresses (docs/webhooks.md "URLs"). */
  webhookAllowLoopback: boolean;
  /** How long a rotated-out webhook secret still signs. */
  webhookPreviousSecretMs: number;
}

/** Everything a route needs: the store, keys, the clock. Built once per server by `serve` (src/serve/context.ts). */
export interface ServerContext {
  /** Every repository (src/store/ports/); the caller opened it and closes it. */
  store: Store;
  config: ServerConfig;
  idTokens: IdTokens;
  /** HMAC key of signed download links. */
  linkKey: Buffer;
  /** The deployment CA (from the store's secrets). */
  ca: CertificateAuthority;
  /** Milliseconds since the epoch; tests inject their own. */
  clock: () => number;
  /** Runs export tasks in worker threads; started and stopped with the app (routes/exports.ts). */
  exporter: Exporter;
  /** Deletes events past their customer's retention period; started and stopped with the app (routes/retention.ts). */
  retention: RetentionSweeper;
  /** The live event streams and their hubs; ended with the app (routes/event-stream.ts). */
  liveEvents: LiveEvents;
}
