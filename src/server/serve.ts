import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { ConnectionLimits } from '../mqtt/admission.js';
import { startBroker, type MqttBroker } from '../mqtt/broker.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import type { Server as TlsServer } from 'node:tls';
import { issueServerCertificate, loadOrCreateCa, pregenerateDeploymentKeys, type CertificateAuthority } from '../pki/ca.js';
import { DEFAULT_GATEWAY_KEY_TYPE, type KeyType } from '../pki/keys.js';
import type { TlsPair } from '../pki/tls-pair.js';
import { IdTokens } from '../auth/idtoken.js';
import { DEFAULT_SCRYPT_COST, MIN_PASSWORD_LENGTH, generatePassword, hashPassword, type ScryptCost } from '../auth/passwords.js';
import { operatorAuditEntry } from '../domain/audit.js';
import { loadLinkKey } from '../auth/secrets.js';
import { openStore, sqliteLocator } from '../store/open.js';
import type { RetentionOptions } from '../retention/sweeper.js';
import type { Store, StoreLocator } from '../store/ports/index.js';
import { buildApp } from './app.js';
import { createContext, type ServerContext } from './context.js';
import { ServiceMetrics } from './metrics.js';
import type { RateLimits } from '../domain/rate-limits.js';
import type { Readiness } from './routes/health.js';
import type { LiveEventOptions } from './live-events.js';

/** How long close() lets in-flight HTTP requests finish before it cuts their connections. */
const DRAIN_GRACE_MS = 3000;

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
}

export interface Bootstrap {
  customerId: string;
  adminEmail: string;
  /** Set only when the password was generated: shown once, never stored in clear. */
  generatedPassword?: string;
}

/**
 * A first start that failed (a port in use) after it had created the customer and administrator:
 * the next start creates no one, so the caller must still show `bootstrap` (a generated password is
 * shown once). `cause` is what failed.
 */
export class FailedAfterBootstrap extends Error {
  constructor(
    readonly bootstrap: Bootstrap,
    override readonly cause: Error,
  ) {
    super(cause.message, { cause });
  }
}

export interface RunningServer {
  app: FastifyInstance;
  ctx: ServerContext;
  /** `http(s)://host:port` as bound (port 0 resolved). */
  url: string;
  /**
   * The base of links and `registration_path`, and where it came from: `--public-url`, the
   * listening host, or the machine's host name (listening on every address).
   */
  publicUrl: { url: string; source: 'option' | 'host' | 'host name' };
  /** The host put into `mqtt_endpoint`, and whether it is the machine's host name. */
  mqttPublicHost: { host: string; source: 'option' | 'host' | 'host name' };
  /** The MQTT over TLS port as bound (port 0 resolved). */
  mqttPort: number;
  /** The embedded broker: its counters and those of ingest (`broker.ingest`). */
  broker: MqttBroker;
  bootstrap: Bootstrap | undefined;
  /** Serves new HTTPS connections with this pair; open connections (and MQTT) are left alone. */
  reloadTls(pair: TlsPair): void;
  /** Stops accepting, drains in-flight requests and messages, closes broker and database. */
  close(): Promise<void>;
}

/** The directories of the data directory (DESIGN.md "Data directory"), private to the service user. */
export function prepareDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  for (const sub of ['pki', 'keys', 'exports', 'assets']) mkdirSync(join(dataDir, sub), { recursive: true, mode: 0o700 });
}

/** The shared directory of files (`--blob-dir`): created when missing, its mode left to its owner. */
export function prepareBlobDir(blobDir: string): void {
  for (const sub of ['exports', 'assets']) mkdirSync(join(blobDir, sub), { recursive: true, mode: 0o700 });
}

/** The database file of a data directory. */
export function databaseFile(dataDir: string): string {
  return join(dataDir, 'scanhub.db');
}

/** On an empty deployment: the first customer and its administrator. */
async function bootstrap(ctx: ServerContext, options: ServeOptions): Promise<Bootstrap | undefined> {
  if ((await ctx.store.customers.count()) > 0) return undefined;
  if (options.adminPassword !== undefined && options.adminPassword.length < MIN_PASSWORD_LENGTH) {
    throw new Error(`SCANHUB_ADMIN_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const generatedPassword = options.adminPassword ? undefined : generatePassword();
  const passwordHash = await hashPassword(options.adminPassword ?? generatedPassword!, ctx.config.passwordCost);
  const now = ctx.clock();
  const admin = { id: randomUUID(), customer_id: options.customerId, email: options.adminEmail, roles: ['ADMIN_ROLE'], password_hash: passwordHash, created: now };
  // Another process may have bootstrapped while the password was hashed: then it did.
  const audit = operatorAuditEntry(randomUUID(), options.customerId, now, 'user.created', { type: 'user', id: admin.id }, {
    email: options.adminEmail,
    roles: admin.roles,
    bootstrap: true,
  });
  if (!(await ctx.store.customers.bootstrap(options.customerId, admin, now, audit))) return undefined;
  return { customerId: options.customerId, adminEmail: options.adminEmail, generatedPassword };
}

/** Whether the address is every address of the machine, which no client can connect to. */
export function isEveryAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** The host that clients should use: the machine's name when listening on every address. */
function reachableHost(host: string): string {
  return isEveryAddress(host) ? hostname() : host;
}

/** Where a default that follows `--host` came from. */
function sourceOf(option: string | undefined, host: string): 'option' | 'host' | 'host name' {
  if (option) return 'option';
  return isEveryAddress(host) ? 'host name' : 'host';
}

/**
 * The pair HTTPS serves: the one given, or one the deployment CA issues for every name clients use.
 * The latter's chain ends with the CA itself, so a client that does not trust it yet can show the
 * CA's fingerprint (trust on first use) and save it.
 */
function httpsPair(options: ServeOptions, ca: CertificateAuthority, dataDir: string, mqttPublicHost: string): TlsPair | undefined {
  if (options.tls !== 'deployment-ca') return options.tls;
  const publicHost = options.publicUrl ? new URL(options.publicUrl).hostname : reachableHost(options.host);
  const issued = issueServerCertificate(ca, dataDir, [options.host, publicHost, mqttPublicHost], undefined, 'https');
  return { certPem: `${issued.certPem.trimEnd()}\n${ca.certPem.trimEnd()}\n`, keyPem: issued.keyPem };
}

/** Starts the whole service: data directory, database, HTTP API and MQTT broker. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const dataDir = resolve(options.dataDir);
  prepareDataDir(dataDir);
  const clock = options.clock ?? Date.now;
  // A first start needs RSA keys for the CA and the MQTT server certificate: the thread pool
  // makes them while this thread opens the database and builds the app.
  const blobDir = resolve(options.blobDir ?? dataDir);
  if (blobDir !== dataDir) prepareBlobDir(blobDir);
  const store: Store = await openStore(options.locator ?? sqliteLocator(dataDir), 'server');
  try {
    const keys = pregenerateDeploymentKeys(dataDir, (await store.secrets.get('pki/ca.key')) === undefined);
    const ca = await loadOrCreateCa(store.secrets, await keys.ca);
    const config = {
      dataDir,
      blobDir,
      publicUrl: options.publicUrl?.replace(/\/+$/, '') ?? '',
      mqttPublicHost: options.mqttPublicHost ?? reachableHost(options.host),
      mqttPort: options.mqttPort,
      gatewayKeyType: options.gatewayKeyType ?? DEFAULT_GATEWAY_KEY_TYPE,
      passwordCost: options.passwordCost ?? DEFAULT_SCRYPT_COST,
    };
    // The tokens' audience is the public URL, which is settled only once the port is bound.
    const idTokens = await IdTokens.load(store.secrets, { audience: () => config.publicUrl, clock });
    const ctx = createContext(store, config, { idTokens, linkKey: await loadLinkKey(store.secrets), ca }, {
      clock,
      liveEvents: options.liveEvents,
      retention: options.retention,
      exportConcurrency: options.exportConcurrency,
    });
    const created = await bootstrap(ctx, options);
    const readiness: Readiness = { http: false, mqtt: false };
    const tls = httpsPair(options, ca, dataDir, config.mqttPublicHost);
    const metrics = new ServiceMetrics(store);
    const app = await buildApp(ctx, {
      logger: options.logger ?? false,
      readiness,
      trustProxy: options.trustProxy,
      rateLimits: options.rateLimits,
      tls,
      metrics,
      metricsToken: options.metricsToken,
    });

    // Once per change, however many writes are refused meanwhile (each 507 is in the request log).
    const where = store.locator.kind === 'sqlite' ? store.locator.file : 'PostgreSQL';
    store.storage.onChange((full) =>
      full
        ? app.log.error({ reason: full, database: where }, 'the database has no space left: writes are refused (HTTP 507, no PUBACK) until space is freed')
        : app.log.info({ database: where }, 'the database has space again: writes go through'),
    );
    const failed = (error: Error) => (created ? new FailedAfterBootstrap(created, error) : error);
    try {
      await app.listen({ host: options.host, port: options.port });
    } catch (error) {
      await app.close();
      throw failed(error as Error);
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    const urlOf = (host: string) => `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const url = urlOf(options.host);
    // Links must work from other machines: never http://0.0.0.0:port.
    if (!config.publicUrl) config.publicUrl = urlOf(reachableHost(options.host));
    readiness.http = true;

    let broker: MqttBroker;
    try {
      broker = await startBroker(ctx, {
        host: options.host,
        port: options.mqttPort,
        log: app.log.child({ component: 'mqtt' }),
        keys,
        createdWindow: options.createdWindow,
        limits: options.mqttLimits,
        proxyProtocol: options.mqttProxyProtocol,
        proxyTrust: options.mqttProxyTrust,
        onCommit: metrics.observeCommit,
      });
    } catch (error) {
      await app.close();
      throw failed(new Error(`cannot start the MQTT broker on ${options.host}:${options.mqttPort}: ${(error as Error).message}`, { cause: error }));
    }
    metrics.watchBroker(broker);
    // mqtt_endpoint (provisioning) names the port as bound, or the balancer's.
    config.mqttPort = options.mqttPublicPort ?? broker.port;
    readiness.mqtt = true;
    readiness.mqttFault = () => broker.fault();
    readiness.threads = () => [broker.threads.writer, ...broker.threads.maintenance];
    // Old events are deleted in the ingest writer thread, between its commits (docs/retention.md).
    ctx.retention.start(app.log.child({ component: 'retention' }), (customerId, cutoff, limit, after) =>
      broker.deleteEvents({ customerId, cutoff, limit, after }),
    );
    const publicUrl = { url: config.publicUrl, source: sourceOf(options.publicUrl, options.host) };
    const mqttPublicHost = { host: config.mqttPublicHost, source: sourceOf(options.mqttPublicHost, options.host) };
    app.log.info(
      { url, publicUrl: publicUrl.url, publicUrlSource: publicUrl.source, mqttPort: broker.port, dataDir, gatewayKeyType: config.gatewayKeyType },
      'scanhub listening',
    );

    let closing: Promise<void> | undefined;
    return {
      app,
      ctx,
      url,
      publicUrl,
      mqttPublicHost,
      mqttPort: broker.port,
      broker,
      bootstrap: created,
      reloadTls(pair) {
        if (!tls) throw new Error('the API is served over plain HTTP: there is no certificate to reload');
        (app.server as unknown as TlsServer).setSecureContext({ cert: pair.certPem, key: pair.keyPem });
      },
      close: () =>
        (closing ??= (async () => {
          readiness.http = false;
          readiness.mqtt = false;
          // A keep-alive connection whose response Node does not yet count as finished (a large
          // download) would hold close() until its keep-alive timeout: after a grace period for
          // in-flight requests, such connections are cut.
          const cut = setTimeout(() => app.server.closeAllConnections(), DRAIN_GRACE_MS);
          // Both stop accepting first; the broker commits what it received before the database closes.
          await Promise.all([app.close(), broker.close()]);
          clearTimeout(cut);
          await store.close();
        })()),
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
