import { IdTokens } from '../auth/idtoken.js';
import { DEFAULT_SCRYPT_COST } from '../auth/passwords.js';
import { loadLinkKey } from '../auth/secrets.js';
import { cursorKey } from '../domain/stream-cursor.js';
import { DEFAULT_WEBHOOK_TIMINGS } from '../domain/webhooks.js';
import { Exporter } from '../export/exporter.js';
import type { CertificateAuthority } from '../pki/ca.js';
import { DEFAULT_GATEWAY_KEY_TYPE } from '../pki/keys.js';
import { RetentionSweeper } from '../retention/sweeper.js';
import type { ServerConfig, ServerContext } from '../server/context.js';
import { LiveEvents } from '../server/live-events/live-events.js';
import type { Store } from '../store/ports/index.js';
import type { ServeOptions } from './options.js';
import { reachableHost } from './public-names.js';

/**
 * The context of the HTTP API over an open store (the caller owns the store and closes it): the
 * deployment's config, its keys and CA, and the services its routes drive, each started and
 * stopped with the app (exports, live events, the deletion of old events).
 */
export async function serverContext(store: Store, options: ServeOptions, dirs: { dataDir: string; blobDir: string }, ca: CertificateAuthority): Promise<ServerContext> {
  const clock = options.clock ?? Date.now;
  const config: ServerConfig = {
    dataDir: dirs.dataDir,
    blobDir: dirs.blobDir,
    publicUrl: options.publicUrl?.replace(/\/+$/, '') ?? '',
    mqttPublicHost: options.mqttPublicHost ?? reachableHost(options.host),
    mqttPort: options.mqttPort,
    gatewayKeyType: options.gatewayKeyType ?? DEFAULT_GATEWAY_KEY_TYPE,
    passwordCost: options.passwordCost ?? DEFAULT_SCRYPT_COST,
    webhookAllowLoopback: options.webhookAllowLoopback ?? false,
    webhookPreviousSecretMs: options.webhooks?.previousSecretMs ?? DEFAULT_WEBHOOK_TIMINGS.previousSecretMs,
  };
  // The tokens' audience is the public URL, which is settled only once the port is bound.
  const idTokens = await IdTokens.load(store.secrets, { audience: () => config.publicUrl, clock });
  const linkKey = await loadLinkKey(store.secrets);
  return {
    store,
    config,
    idTokens,
    linkKey,
    ca,
    clock,
    exporter: new Exporter({ store, dataDir: config.blobDir, clock, ...(options.exportConcurrency !== undefined ? { concurrency: options.exportConcurrency } : {}) }),
    liveEvents: new LiveEvents(store, cursorKey(linkKey), options.liveEvents),
    retention: new RetentionSweeper({ store, clock, ...options.retention }),
  };
}
