import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { startBroker, type MqttBroker } from '../mqtt/broker.js';
import { MqttMetrics } from '../mqtt/metrics.js';
import { loadOrCreateCa, pregenerateDeploymentKeys, type PregeneratedKeys } from '../pki/ca.js';
import type { TlsPair } from '../pki/tls-pair.js';
import { buildApp } from '../server/app.js';
import type { ServerContext } from '../server/context.js';
import { ServiceMetrics } from '../server/metrics.js';
import type { Readiness } from '../server/routes/health.js';
import { openStore, sqliteLocator } from '../store/open.js';
import type { Store } from '../store/ports/index.js';
import { bootstrap, prepareBlobDir, prepareDataDir, type Bootstrap } from './bootstrap.js';
import { serverContext } from './context.js';
import type { ServeOptions } from './options.js';
import { httpsPair, reachableHost, sourceOf, type NameSource } from './public-names.js';
import { WebhookDeliverer } from '../webhooks/deliverer.js';
import { AlertEvaluator } from '../alerts/evaluator.js';

/** How long close() lets in-flight HTTP requests finish before it cuts their connections. */
const DRAIN_GRACE_MS = 3000;

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

/** The started service, as startServer hands it to `serve` and the tests. */
export interface RunningServer {
  app: FastifyInstance;
  ctx: ServerContext;
  /** `http(s)://host:port` as bound (port 0 resolved). */
  url: string;
  /**
   * The base of links and `registration_path`, and where it came from: `--public-url`, the
   * listening host, or the machine's host name (listening on every address).
   */
  publicUrl: { url: string; source: NameSource };
  /** The host put into `mqtt_endpoint`, and whether it is the machine's host name. */
  mqttPublicHost: { host: string; source: NameSource };
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

/** What has started so far, and how a failure from here on is reported (FailedAfterBootstrap after a first start). */
interface Started {
  options: ServeOptions;
  ctx: ServerContext;
  app: FastifyInstance;
  failed: (error: Error) => Error;
}

/** Starts the whole service: data directory, database, HTTP API and MQTT broker. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const dataDir = resolve(options.dataDir);
  prepareDataDir(dataDir);
  const blobDir = resolve(options.blobDir ?? dataDir);
  if (blobDir !== dataDir) prepareBlobDir(blobDir);
  const store: Store = await openStore(options.locator ?? sqliteLocator(dataDir), 'server');
  try {
    return await startOnStore(store, options, dataDir, blobDir);
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** The service over its open store: the app listens first, then the broker, then old events start to be deleted. */
async function startOnStore(store: Store, options: ServeOptions, dataDir: string, blobDir: string): Promise<RunningServer> {
  // A first start needs RSA keys for the CA and the MQTT server certificate: the thread pool
  // makes them while this thread opens the database and builds the app.
  const keys = pregenerateDeploymentKeys(dataDir, (await store.secrets.get('pki/ca.key')) === undefined);
  const ca = await loadOrCreateCa(store.secrets, await keys.ca);
  const ctx = await serverContext(store, options, { dataDir, blobDir }, ca);
  const { config } = ctx;
  const created = await bootstrap(ctx, options);
  const readiness: Readiness = { http: false, mqtt: false };
  const tls = httpsPair(options, ca, dataDir, config.mqttPublicHost);
  // One registry: the MQTT and ingest metrics first, as /metrics lists them.
  const registry = new Registry();
  const mqttMetrics = new MqttMetrics(registry);
  const metrics = new ServiceMetrics(store, registry);
  const app = await buildApp(ctx, {
    logger: options.logger ?? false,
    readiness,
    trustProxy: options.trustProxy,
    rateLimits: options.rateLimits,
    tls,
    metrics,
    metricsToken: options.metricsToken,
  });
  logStorageChanges(store, app);
  const started: Started = { options, ctx, app, failed: (error) => (created ? new FailedAfterBootstrap(created, error) : error) };

  const url = await listenHttp(started, tls !== undefined);
  readiness.http = true;
  const webhooks = new WebhookDeliverer({
    store,
    clock: ctx.clock,
    timings: options.webhooks,
    allowLoopback: options.webhookAllowLoopback,
    keptEvents: options.webhookWindowEvents,
    instance: randomUUID(),
    log: app.log.child({ component: 'webhooks' }),
  });
  // Commits hand their events over while webhooks follow them here (docs/webhooks.md "Delivery").
  const broker = await startMqtt(started, keys, mqttMetrics, () => webhooks.following);
  // mqtt_endpoint (provisioning) names the port as bound, or the balancer's.
  config.mqttPort = options.mqttPublicPort ?? broker.port;
  readiness.mqtt = true;
  readiness.mqttFault = () => broker.fault();
  readiness.threads = () => [broker.threads.writer, ...broker.threads.maintenance];
  // Old events are deleted in the ingest writer thread, between its commits (docs/retention.md).
  ctx.retention.start(app.log.child({ component: 'retention' }), (customerId, cutoff, limit, after) =>
    broker.deleteEvents({ customerId, cutoff, limit, after }),
  );
  webhooks.start();
  const alerts = new AlertEvaluator({ store, clock: ctx.clock, intervalMs: options.alertIntervalMs, instance: randomUUID(), log: app.log.child({ component: 'alerts' }) });
  alerts.start();
  const publicUrl = { url: config.publicUrl, source: sourceOf(options.publicUrl, options.host) };
  const mqttPublicHost = { host: config.mqttPublicHost, source: sourceOf(options.mqttPublicHost, options.host) };
  app.log.info(
    { url, publicUrl: publicUrl.url, publicUrlSource: publicUrl.source, mqttPort: broker.port, dataDir, gatewayKeyType: config.gatewayKeyType },
    'scanhub listening',
  );
  return runningServer({ app, ctx, url, publicUrl, mqttPublicHost, mqttPort: broker.port, broker, bootstrap: created }, tls !== undefined, store, readiness, [webhooks, alerts]);
}

/** Once per change, however many writes are refused meanwhile (each 507 is in the request log). */
function logStorageChanges(store: Store, app: FastifyInstance): void {
  const where = store.locator.kind === 'sqlite' ? store.locator.file : 'PostgreSQL';
  store.storage.onChange((full) =>
    full
      ? app.log.error({ reason: full, database: where }, 'the database has no space left: writes are refused (HTTP 507, no PUBACK) until space is freed')
      : app.log.info({ database: where }, 'the database has space again: writes go through'),
  );
}

/** Binds the HTTP port; the URL as bound. Settles the public URL when no option gave it. */
async function listenHttp({ options, ctx, app, failed }: Started, https: boolean): Promise<string> {
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await app.close();
    throw failed(error as Error);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const urlOf = (host: string) => `${https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // Links must work from other machines: never http://0.0.0.0:port.
  if (!ctx.config.publicUrl) ctx.config.publicUrl = urlOf(reachableHost(options.host));
  return urlOf(options.host);
}

/** Starts the broker, its counters watched by the metrics; a failure closes the app. */
async function startMqtt({ options, ctx, app, failed }: Started, keys: PregeneratedKeys, metrics: MqttMetrics, handOff: () => boolean): Promise<MqttBroker> {
  let broker: MqttBroker;
  try {
    broker = await startBroker({ store: ctx.store, ca: ctx.ca, clock: ctx.clock, dataDir: ctx.config.dataDir, publicHost: ctx.config.mqttPublicHost }, {
      host: options.host,
      port: options.mqttPort,
      log: app.log.child({ component: 'mqtt' }),
      keys,
      createdWindow: options.createdWindow,
      limits: options.mqttLimits,
      proxyProtocol: options.mqttProxyProtocol,
      proxyTrust: options.mqttProxyTrust,
      onCommit: metrics.observeCommit,
      handOff,
    });
  } catch (error) {
    await app.close();
    throw failed(new Error(`cannot start the MQTT broker on ${options.host}:${options.mqttPort}: ${(error as Error).message}`, { cause: error }));
  }
  metrics.watch(broker);
  return broker;
}

/** The handle of the started service: TLS reload and the drain at shutdown. */
function runningServer(
  parts: Omit<RunningServer, 'reloadTls' | 'close'>,
  https: boolean,
  store: Store,
  readiness: Readiness,
  background: { close(): Promise<void> }[],
): RunningServer {
  const { app, broker } = parts;
  let closing: Promise<void> | undefined;
  return {
    ...parts,
    reloadTls(pair) {
      if (!https) throw new Error('the API is served over plain HTTP: there is no certificate to reload');
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
        await Promise.all([app.close(), broker.close(), ...background.map((work) => work.close())]);
        clearTimeout(cut);
        await store.close();
      })()),
  };
}
