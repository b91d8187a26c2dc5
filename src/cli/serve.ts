import { isIP } from 'node:net';
import { Command, InvalidArgumentError, Option } from 'commander';
import { LOOPBACK_RANGES, isLoopback } from '../domain/addresses.js';
import { customerIdProblem, isCustomerId, isEmailAddress } from '../domain/identifiers.js';
import { parseDuration, parseTimeInput } from '../domain/time-input.js';
import { DEFAULT_CREATED_WINDOW, MAX_CREATED_AHEAD_MS } from '../domain/payload-limits.js';
import { RATE_LIMITS } from '../domain/rate-limits.js';
import { MAX_DELETED_PER_SECOND } from '../domain/retention.js';
import { DEFAULT_GATEWAY_KEY_TYPE, KEY_TYPES, type KeyType } from '../pki/keys.js';
import { TlsPairError, readTlsPair, type TlsPair } from '../pki/tls-pair.js';
import { DataDirBusy, lockDataDir, type DataDirLock } from '../store/open.js';
import type { Bootstrap } from '../serve/bootstrap.js';
import type { RunningServer } from '../serve/start.js';
import { resolveDeployment, addDeploymentOptions } from './deployment.js';
import { CliError, Exit, createIo } from './io.js';
import { tuneServeHeap } from './serve-heap.js';
import { LOG_FORMATS, LOG_LEVELS, serveLogger, type LogFormat } from './serve-log.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${value}" is not a port number (0-65535).`);
  return n;
}

/** `--auth-rate-limit`, `--provisioning-rate-limit`: requests a minute from one address, 1 to 1,000,000. */
function perMinute(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidArgumentError(`"${value}" is not a number of requests a minute (1-1000000).`);
  return n;
}

/** `--retention-rate`: events a deletion pass deletes per second at most. */
function eventsPerSecond(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1_000_000) throw new InvalidArgumentError(`"${value}" is not a number of events a second (1-1000000).`);
  return n;
}

/** `--trust-proxy 10.0.0.0/8,192.168.1.5`: addresses or CIDR ranges, IPv4 or IPv6, comma-separated. */
export function trustedProxies(value: string): string[] {
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) throw new InvalidArgumentError('give at least one address or CIDR range, e.g. 10.0.0.0/8.');
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (!family || !prefixOk || extra !== undefined) {
      throw new InvalidArgumentError(`"${entry}" is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8).`);
    }
  }
  return entries;
}

/** The base of every link the service hands out: an absolute http(s) URL without query or fragment. */
function publicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not an absolute URL such as https://scanhub.example.com.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError(`"${value}" is not an http or https URL.`);
  if (url.search || url.hash || url.username || url.password) {
    throw new InvalidArgumentError(`"${value}" must not carry a query, a fragment or credentials.`);
  }
  return value;
}

/** `--gateway-key-type`: one of KEY_TYPES. */
function gatewayKeyType(value: string): KeyType {
  if (!(KEY_TYPES as readonly string[]).includes(value)) throw new InvalidArgumentError(`"${value}" is not a key type: give ${KEY_TYPES.join(' or ')}.`);
  return value as KeyType;
}

function isDuration(value: string): boolean {
  try {
    parseDuration(value);
    return true;
  } catch {
    return false;
  }
}

/** The earliest `created` of an MQTT event: a fixed time (relative forms would move with each start). */
function earliestCreated(value: string): number {
  if (value.trim().toLowerCase() === 'now' || isDuration(value)) throw new InvalidArgumentError(`"${value}" is relative; give a date such as 2000-01-01 or epoch milliseconds.`);
  let millis: number;
  try {
    millis = parseTimeInput(value, Date.now());
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a time: use ISO 8601 (2000-01-01, 2000-01-01T00:00:00Z) or epoch milliseconds.`);
  }
  if (millis < 0 || millis >= Date.now()) throw new InvalidArgumentError(`"${value}" must lie between 1970 and now.`);
  return millis;
}

/** How far past its receipt an MQTT event's `created` may be. */
function createdAhead(value: string): number {
  let millis: number;
  try {
    millis = parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (millis > MAX_CREATED_AHEAD_MS) throw new InvalidArgumentError(`"${value}" is more than ${MAX_CREATED_AHEAD_MS / 86_400_000}d.`);
  return millis;
}

/**
 * The environment's settings for the first start (customer, administrator), the log level and the metrics token,
 * checked as `scanhub operator customers add` checks its arguments: a bad value is refused before
 * anything is created.
 */
function environmentSettings(env: NodeJS.ProcessEnv) {
  const customerId = env.SCANHUB_CUSTOMER_ID || 'default';
  if (!isCustomerId(customerId)) throw new CliError(`SCANHUB_CUSTOMER_ID: ${customerIdProblem(customerId)}`, Exit.USAGE);
  const adminEmail = env.SCANHUB_ADMIN_EMAIL || 'admin@localhost';
  if (!isEmailAddress(adminEmail)) throw new CliError(`SCANHUB_ADMIN_EMAIL: "${adminEmail}" is not an e-mail address`, Exit.USAGE);
  const logLevel = env.SCANHUB_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new CliError(`SCANHUB_LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`, Exit.USAGE);
  // An empty SCANHUB_METRICS_TOKEN is no token (as an unset one): /metrics then answers loopback only.
  return { customerId, adminEmail, adminPassword: env.SCANHUB_ADMIN_PASSWORD || undefined, logLevel, metricsToken: env.SCANHUB_METRICS_TOKEN || undefined };
}

/** A switch set from the environment: 1/true/yes/on or 0/false/no/off (empty is off); anything else is a usage error. */
export function environmentSwitch(name: string, value: string | undefined): boolean {
  const text = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(text)) return false;
  throw new CliError(`${name}: "${value}" is neither 1/true/yes/on nor 0/false/no/off`, Exit.USAGE);
}

type Derived<K extends string> = { source: 'option' | 'host' | 'host name' } & Record<K, string>;

/**
 * Listening on every address, serve cannot know the name clients use: it says which name it
 * built links and the MQTT endpoint on, and which option to set when that name is wrong.
 */
function hostNameDefaults(publicUrl: Derived<'url'>, mqttHost: Derived<'host'>, host: string): string | undefined {
  if (publicUrl.source !== 'host name' && mqttHost.source !== 'host name') return undefined;
  const parts: string[] = [];
  if (publicUrl.source === 'host name') parts.push(`links use ${publicUrl.url}`);
  if (mqttHost.source === 'host name') parts.push(`gateways are sent to MQTT host ${mqttHost.host}`);
  const options = [publicUrl.source === 'host name' ? '--public-url' : '', mqttHost.source === 'host name' ? '--mqtt-public-host' : '']
    .filter(Boolean)
    .join(' and ');
  return `--host ${host} listens on every address, so ${parts.join(' and ')} (this machine's host name); if clients reach it by another name, set ${options}.\n`;
}

/** `--tls-cert/--tls-key` read and checked, or undefined without them; a bad file is a usage error (exit 2) before listening. */
function tlsFiles(certFile: string | undefined, keyFile: string | undefined): TlsPair | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (!certFile || !keyFile) throw new CliError('--tls-cert and --tls-key go together: give both files (or --https for a certificate of the deployment CA)', Exit.USAGE);
  try {
    return readTlsPair(certFile, keyFile);
  } catch (error) {
    if (error instanceof TlsPairError) throw new CliError(`--tls-${error.file}: ${error.message}`, Exit.USAGE);
    throw error;
  }
}

/** What a first start created, on stderr: the customer, its administrator, and a generated password (shown once). */
function printBootstrap(bootstrap: Bootstrap): void {
  process.stderr.write(`Created customer "${bootstrap.customerId}" with administrator ${bootstrap.adminEmail}.\n`);
  if (bootstrap.generatedPassword) {
    process.stderr.write(`Generated administrator password (shown once, store it now): ${bootstrap.generatedPassword}\n`);
  }
}

/** On SIGHUP: the certificate files read again and served to new connections; bad files keep the old pair. */
function reloadTlsOnHangup(server: Pick<RunningServer, 'reloadTls' | 'app'>, certFile: string, keyFile: string): void {
  process.on('SIGHUP', () => {
    let pair: TlsPair;
    try {
      pair = tlsFiles(certFile, keyFile)!;
      server.reloadTls(pair);
    } catch (error) {
      const reason = (error as Error).message;
      server.app.log.error({ certFile, keyFile, reason }, 'TLS certificate not reloaded');
      process.stderr.write(`scanhub: TLS certificate not reloaded, still serving the previous one: ${reason}\n`);
      return;
    }
    server.app.log.info({ certFile, keyFile }, 'TLS certificate reloaded');
    process.stderr.write(`Reloaded the TLS certificate from ${certFile}.\n`);
  });
}

/** Takes the SQLite data directory for this `serve`, or refuses (exit 2) while another process holds it. */
function takeDataDir(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir, 'serve');
  } catch (error) {
    if (error instanceof DataDirBusy) throw new CliError(`${error.message}: stop it first, two processes never share a data directory`, Exit.USAGE);
    throw error;
  }
}

/** `scanhub serve`: the whole service in this process (DESIGN.md runtime contract). */
export function registerServeCommand(program: Command): void {
  const serve = program.command('serve');
  addDeploymentOptions(serve)
    .description('run the scanhub service: HTTP API, MQTT broker, SQLite store (or PostgreSQL with --database)')
    .addOption(new Option('--data-dir <dir>', 'data directory').env('SCANHUB_DATA_DIR').default('./scanhub-data'))
    .addOption(new Option('--host <host>', 'address to listen on').env('SCANHUB_HOST').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'HTTP port').env('SCANHUB_PORT').default(8080).argParser(port))
    .addOption(new Option('--mqtt-port <port>', 'MQTT over TLS port').env('SCANHUB_MQTT_PORT').default(8883).argParser(port))
    .addOption(new Option('--tls-cert <file>', 'serve the API over HTTPS with this certificate (PEM, chain allowed; reread on SIGHUP)').env('SCANHUB_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'the private key (PEM) of --tls-cert').env('SCANHUB_TLS_KEY'))
    .addOption(new Option('--https', 'serve the API over HTTPS with a certificate of the deployment CA (see `scanhub operator ca`); env SCANHUB_HTTPS=1'))
    .addOption(new Option('--public-url <url>', 'base URL for links (default http(s)://<host>:<port>; the machine\'s host name for <host> with --host 0.0.0.0 or ::)').env('SCANHUB_PUBLIC_URL').argParser(publicUrl))
    .addOption(
      new Option('--mqtt-proxy-trust <cidrs>', 'balancers (addresses or CIDR ranges, comma-separated) whose PROXY protocol header is believed; other peers are closed')
        .env('SCANHUB_MQTT_PROXY_TRUST')
        .default(LOOPBACK_RANGES, 'loopback')
        .argParser(trustedProxies),
    )
    .addOption(new Option('--trust-proxy <cidrs>', 'balancers (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client').env('SCANHUB_TRUST_PROXY').argParser(trustedProxies))
    .addOption(
      new Option('--auth-rate-limit <n>', 'POST /auth/* requests a minute from one client address (log-in, accept-invitation)')
        .env('SCANHUB_AUTH_RATE_LIMIT')
        .default(RATE_LIMITS.auth)
        .argParser(perMinute),
    )
    .addOption(
      new Option('--provisioning-rate-limit <n>', 'POST /provisioning requests a minute from one client address (devices redeeming their token)')
        .env('SCANHUB_PROVISIONING_RATE_LIMIT')
        .default(RATE_LIMITS.provisioning)
        .argParser(perMinute),
    )
    .addOption(new Option('--mqtt-public-port <port>', 'port put into mqtt_endpoint (default: the MQTT port as bound; set it to the balancer\'s)').env('SCANHUB_MQTT_PUBLIC_PORT').argParser(port))
    .addOption(new Option('--mqtt-proxy-protocol', 'expect HAProxy\'s PROXY protocol v2 header on every MQTT connection (refusing those without); env SCANHUB_MQTT_PROXY_PROTOCOL=1'))
    .addOption(new Option('--mqtt-public-host <host>', 'host put into mqtt_endpoint (default: --host, or the machine\'s host name)').env('SCANHUB_MQTT_PUBLIC_HOST'))
    .addOption(
      new Option('--log-format <format>', 'log lines for a person (pretty) or JSON lines (json); default pretty on a terminal, json otherwise')
        .env('SCANHUB_LOG_FORMAT')
        .choices(LOG_FORMATS),
    )
    .addOption(
      new Option('--gateway-key-type <type>', `key of new gateway certificates: ${KEY_TYPES.join(' or ')} (for devices that need RSA)`)
        .env('SCANHUB_GATEWAY_KEY_TYPE')
        .default(DEFAULT_GATEWAY_KEY_TYPE)
        .argParser(gatewayKeyType),
    )
    .addOption(
      new Option('--retention-rate <n>', 'events a deletion of old events (retention) deletes per second at most')
        .env('SCANHUB_RETENTION_RATE')
        .default(MAX_DELETED_PER_SECOND)
        .argParser(eventsPerSecond),
    )
    .addOption(
      new Option('--min-created <time>', 'earliest created an MQTT event may have (ISO 8601 or epoch ms)')
        .env('SCANHUB_MIN_CREATED')
        .default(DEFAULT_CREATED_WINDOW.earliest, '2000-01-01T00:00:00Z')
        .argParser(earliestCreated),
    )
    .addOption(
      new Option('--max-created-ahead <duration>', "how far past its receipt an MQTT event's created may be (at most 366d)")
        .env('SCANHUB_MAX_CREATED_AHEAD')
        .default(DEFAULT_CREATED_WINDOW.aheadMs, '1d')
        .argParser(createdAhead),
    )
    .action(async (options: {
      dataDir: string;
      database?: string;
      masterKeyFile?: string;
      blobDir?: string;
      host: string;
      port: number;
      mqttPort: number;
      publicUrl?: string;
      mqttPublicHost?: string;
      mqttPublicPort?: number;
      trustProxy?: string[];
      mqttProxyProtocol?: boolean;
      mqttProxyTrust: string[];
      tlsCert?: string;
      tlsKey?: string;
      https?: boolean;
      minCreated: number;
      maxCreatedAhead: number;
      logFormat?: LogFormat;
      gatewayKeyType: KeyType;
      authRateLimit: number;
      provisioningRateLimit: number;
      retentionRate: number;
    }) => {
      // Before the server allocates anything (serve-heap.ts).
      const heapFlags = tuneServeHeap();
      const { logLevel, ...settings } = environmentSettings(process.env);
      const { database, masterKeyFile, blobDir: blobOption, tlsCert, tlsKey, https, logFormat, ...rest } = options;
      const io = createIo({});
      const log = await serveLogger(logFormat ?? (io.tty ? 'pretty' : 'json'), logLevel, io.color);
      const pair = tlsFiles(tlsCert, tlsKey);
      const tls = pair ?? (https || environmentSwitch('SCANHUB_HTTPS', process.env.SCANHUB_HTTPS) ? 'deployment-ca' : undefined);
      const { locator, blobDir } = resolveDeployment({ dataDir: options.dataDir, database, masterKeyFile, blobDir: blobOption });
      // One process per SQLite data directory: a second `serve` would run a second broker and writer on one file.
      const lock = locator.kind === 'sqlite' ? takeDataDir(locator.dataDir) : undefined;
      // Loaded here: the server (fastify and friends) would slow every client command's start.
      const [{ startServer }, { FailedAfterBootstrap }] = await Promise.all([import('../serve/start.js'), import('../serve/bootstrap.js')]);
      const { minCreated, maxCreatedAhead, mqttProxyProtocol, mqttProxyTrust, authRateLimit, provisioningRateLimit, retentionRate, ...listen } = rest;
      let server: Awaited<ReturnType<typeof startServer>> | undefined;
      // Installed before anything starts, and before the line that says it serves (whoever waits
      // for that line may signal at once): a signal during start-up stops the server once it has
      // started (after its bootstrap lines), rather than killing the process halfway.
      let stopAsked: string | undefined;
      const shutdown = (running: NonNullable<typeof server>, signal: string) => {
        running.app.log.info({ signal }, 'shutting down');
        running.close().then(
          async () => {
            lock?.release();
            await log.close();
            process.exit(0);
          },
          async (error: unknown) => {
            running.app.log.error({ err: error }, 'shutdown failed');
            await log.close();
            process.exit(1);
          },
        );
      };
      const onSignal = (signal: string) => {
        // A second signal while starting or draining exits at once.
        process.once(signal, () => {
          log.abandon();
          process.exit(130);
        });
        if (server) shutdown(server, signal);
        else stopAsked = signal;
      };
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      process.once('SIGINT', () => onSignal('SIGINT'));
      try {
        server = await startServer({
          ...listen,
          locator,
          blobDir,
          ...settings,
          logger: log.options,
          tls,
          mqttProxyProtocol: mqttProxyProtocol || environmentSwitch('SCANHUB_MQTT_PROXY_PROTOCOL', process.env.SCANHUB_MQTT_PROXY_PROTOCOL),
          mqttProxyTrust,
          createdWindow: { earliest: minCreated, aheadMs: maxCreatedAhead },
          rateLimits: { auth: authRateLimit, provisioning: provisioningRateLimit },
          retention: { maxDeletedPerSecond: retentionRate },
        });
      } catch (error) {
        lock?.release();
        // The next start creates no one: what this one created is shown all the same.
        if (error instanceof FailedAfterBootstrap) {
          printBootstrap(error.bootstrap);
          throw error.cause;
        }
        throw error;
      }
      if (pair) reloadTlsOnHangup(server, tlsCert!, tlsKey!);
      if (server.bootstrap) printBootstrap(server.bootstrap);
      server.app.log.debug({ flags: heapFlags }, 'V8 heap settings applied');
      if (stopAsked) {
        shutdown(server, stopAsked);
        return new Promise(() => {});
      }
      process.stderr.write(`scanhub is serving ${server.url} (MQTT over TLS on port ${server.mqttPort}); Ctrl-C stops it.\n`);
      const hostNameNotice = hostNameDefaults(server.publicUrl, server.mqttPublicHost, options.host);
      if (hostNameNotice) process.stderr.write(hostNameNotice);
      if (!tls && !isLoopback(options.host)) {
        process.stderr.write(
          `warning: the API listens on ${options.host} over plain HTTP, so passwords, tokens and gateway keys cross the network in clear text: serve HTTPS with --tls-cert/--tls-key or --https.\n`,
        );
      }
      // Keep the action pending: the process lives until a signal.
      await new Promise(() => {});
    });
}
