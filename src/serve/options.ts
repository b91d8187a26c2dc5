import type { FastifyServerOptions } from 'fastify';
import type { ScryptCost } from '../auth/passwords.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import type { RateLimits } from '../domain/rate-limits.js';
import type { ConnectionLimits } from '../mqtt/admission.js';
import type { KeyType } from '../pki/keys.js';
import type { TlsPair } from '../pki/tls-pair.js';
import type { RetentionOptions } from '../retention/sweeper.js';
import type { LiveEventOptions } from '../server/live-events/live-events.js';
import type { StoreLocator } from '../store/ports/index.js';
import type { WebhookTimings } from '../domain/webhooks.js';

/** What the service is started with: `scanhub serve` maps its flags and environment onto it; tests set it directly. */
export interface ServeOptions {
  dataDir: string;
  /** Where everything is stored (default: SQLite in the data directory). */
  locator?: StoreLocator;
  /** Export and asset files, provisioning packages (default: the data directory). */
  blobDir?: string;
  host: string;
  port: number;
  mqttPort: number;
  publicUrl?: string;
  mqttPublicHost?: string;
  /** The port put into `mqtt_endpoint` when gateways reach MQTT through a balancer on another port (default: the bound MQTT port). */
  mqttPublicPort?: number;
  /** Every MQTT connection starts with a PROXY protocol v2 header from the balancer. */
  mqttProxyProtocol?: boolean;
  /** The balancers (addresses or CIDR ranges) whose PROXY header is believed; loopback when omitted. */
  mqttProxyTrust?: string[];
  customerId: string;
  adminEmail: string;
  adminPassword?: string;
  logger?: FastifyServerOptions['logger'];
  clock?: () => number;
  /** What an MQTT event's `created` may be (default DEFAULT_CREATED_WINDOW). */
  createdWindow?: CreatedWindow;
  /** Balancers whose X-Forwarded-For is believed (addresses or CIDR ranges). */
  trustProxy?: string[];
  /** Deadlines and caps for MQTT connections not yet authenticated (tests shorten them). */
  mqttLimits?: Partial<ConnectionLimits>;
  /** Requests per minute per client address on POST /auth/* and POST /provisioning (default RATE_LIMITS; tests change them). */
  rateLimits?: RateLimits;
  /** The key type of new gateway certificates (default DEFAULT_GATEWAY_KEY_TYPE, EC P-256). */
  gatewayKeyType?: KeyType;
  /** HTTPS for the API: with this pair (`--tls-cert/--tls-key`), or a certificate of the deployment CA (`--https`). */
  tls?: TlsPair | 'deployment-ca';
  /** Timings of the deletion of old events (tests shorten them; default: src/retention/sweeper.ts). */
  retention?: RetentionOptions;
  /** SCANHUB_METRICS_TOKEN: `GET /metrics` needs it as a Bearer token; unset, it answers loopback clients only. */
  metricsToken?: string;
  /** Heartbeat, buffer bound and read size of the live event streams (default DEFAULT_LIVE_EVENT_OPTIONS; tests shorten them). */
  liveEvents?: Partial<LiveEventOptions>;
  /** Exports this instance runs at once (default EXPORT_CONCURRENCY; tests set 0 to hold tasks PENDING). */
  exportConcurrency?: number;
  /**
   * The scrypt cost of new password hashes (default DEFAULT_SCRYPT_COST). The in-process test
   * server lowers it: the suite sets thousands of passwords. `scanhub serve` never sets it.
   */
  passwordCost?: ScryptCost;
  /** `--webhook-allow-loopback` (SCANHUB_WEBHOOK_ALLOW_LOOPBACK): webhook URLs may name loopback addresses. */
  webhookAllowLoopback?: boolean;
  /** Retry, timeout and lease timings of webhook deliveries (default DEFAULT_WEBHOOK_TIMINGS; tests shorten them). */
  webhooks?: Partial<WebhookTimings>;
  /** Events of a customer the webhooks keep in memory (default webhooks/recent-events.ts KEPT; tests shrink it). */
  webhookWindowEvents?: number;
  /** How often alert rules are evaluated (default DEFAULT_ALERT_INTERVAL_MS; tests shorten it). */
  alertIntervalMs?: number;
}
