import type { ServeOptions } from '../../serve/options.js';
import type { RunningServer } from '../../serve/start.js';
import { DataDirBusy, lockDataDir, type DataDirLock } from '../../store/open.js';
import type { StoreLocator } from '../../store/ports/index.js';
import { resolveDeployment } from '../deployment.js';
import { CliError, Exit, createIo } from '../io.js';
import { environmentSettings, environmentSwitch, type ServeFlags } from './flags.js';
import { tuneServeHeap } from './heap.js';
import { serveLogger, type ServeLog } from './log.js';
import { printBootstrap, printServing } from './notices.js';
import { reloadTlsOnHangup, tlsFiles } from './tls-files.js';

/** Takes the SQLite data directory for this `serve`, or refuses (exit 2) while another process holds it. */
function takeDataDir(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir, 'serve');
  } catch (error) {
    if (error instanceof DataDirBusy) throw new CliError(`${error.message}: stop it first, two processes never share a data directory`, Exit.USAGE);
    throw error;
  }
}

/** A port taken by another process, said with the flag that picks another (DESIGN "CLI conventions"); undefined for other errors. */
function portInUse(error: unknown, flags: ServeFlags): CliError | undefined {
  // The broker's failure wraps the socket's error (src/serve/start.ts): look down the causes.
  let cause = error as (NodeJS.ErrnoException & { port?: number; address?: string }) | undefined;
  while (cause && cause.code !== 'EADDRINUSE') cause = cause.cause as typeof cause;
  if (!cause) return undefined;
  const { port, address } = cause;
  const [what, flag] = port === flags.mqttPort ? ['MQTT', '--mqtt-port'] : ['HTTP', '--port'];
  return new CliError(`the ${what} port ${address ?? flags.host}:${port} is in use (another scanhub serve?): stop what uses it, or choose another port with ${flag}`);
}

/** What the command settled before the service starts: where it stores, how it serves HTTPS, where it logs. */
interface Resolved {
  locator: StoreLocator;
  blobDir: string | undefined;
  tls: ServeOptions['tls'];
  log: ServeLog;
}

/** The flags, the environment's settings and what the command resolved, as the service takes them. */
function serveOptions(flags: ServeFlags, settings: Omit<ReturnType<typeof environmentSettings>, 'logLevel'>, resolved: Resolved): ServeOptions {
  const { database, masterKeyFile, blobDir: _blobOption, tlsCert, tlsKey, https, logFormat, ...rest } = flags;
  const { minCreated, maxCreatedAhead, mqttProxyProtocol, mqttProxyTrust, webhookAllowLoopback, authRateLimit, provisioningRateLimit, retentionRate, ...listen } = rest;
  return {
    ...listen,
    locator: resolved.locator,
    blobDir: resolved.blobDir,
    ...settings,
    logger: resolved.log.options,
    tls: resolved.tls,
    mqttProxyProtocol: mqttProxyProtocol || environmentSwitch('SCANHUB_MQTT_PROXY_PROTOCOL', process.env.SCANHUB_MQTT_PROXY_PROTOCOL),
    mqttProxyTrust,
    webhookAllowLoopback: webhookAllowLoopback || environmentSwitch('SCANHUB_WEBHOOK_ALLOW_LOOPBACK', process.env.SCANHUB_WEBHOOK_ALLOW_LOOPBACK),
    createdWindow: { earliest: minCreated, aheadMs: maxCreatedAhead },
    rateLimits: { auth: authRateLimit, provisioning: provisioningRateLimit },
    retention: { maxDeletedPerSecond: retentionRate },
  };
}

/**
 * SIGTERM and SIGINT stop the server: installed before anything starts, and before the line that
 * says it serves (whoever waits for that line may signal at once). A signal during start-up stops
 * the server once it has started (after its bootstrap lines), rather than killing the process
 * halfway; a second signal while starting or draining exits at once.
 */
function stopOnSignals(lock: DataDirLock | undefined, log: ServeLog): { started(server: RunningServer): boolean } {
  let server: RunningServer | undefined;
  let stopAsked: string | undefined;
  const shutdown = (running: RunningServer, signal: string) => {
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
    process.once(signal, () => {
      log.abandon();
      process.exit(130);
    });
    if (server) shutdown(server, signal);
    else stopAsked = signal;
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  return {
    /** The server has started: stopped now (true) when a signal came meanwhile. */
    started(running) {
      server = running;
      if (stopAsked) shutdown(running, stopAsked);
      return stopAsked !== undefined;
    },
  };
}

/** `scanhub serve`'s action: the service in this process until a signal stops it. */
export async function runServe(flags: ServeFlags): Promise<void> {
  // Before the server allocates anything (heap.ts).
  const heapFlags = tuneServeHeap();
  const { logLevel, ...settings } = environmentSettings(process.env);
  const io = createIo({});
  const log = await serveLogger(flags.logFormat ?? (io.tty ? 'pretty' : 'json'), logLevel, io.color);
  const pair = tlsFiles(flags.tlsCert, flags.tlsKey);
  const tls = pair ?? (flags.https || environmentSwitch('SCANHUB_HTTPS', process.env.SCANHUB_HTTPS) ? 'deployment-ca' : undefined);
  const { locator, blobDir } = resolveDeployment({ dataDir: flags.dataDir, database: flags.database, masterKeyFile: flags.masterKeyFile, blobDir: flags.blobDir });
  // One process per SQLite data directory: a second `serve` would run a second broker and writer on one file.
  const lock = locator.kind === 'sqlite' ? takeDataDir(locator.dataDir) : undefined;
  // Loaded here: the server (fastify and friends) would slow every client command's start.
  const { startServer, FailedAfterBootstrap } = await import('../../serve/start.js');
  const signals = stopOnSignals(lock, log);
  let server: RunningServer;
  try {
    server = await startServer(serveOptions(flags, settings, { locator, blobDir, tls, log }));
  } catch (error) {
    lock?.release();
    // The next start creates no one: what this one created is shown all the same.
    if (error instanceof FailedAfterBootstrap) {
      printBootstrap(error.bootstrap);
      throw portInUse(error.cause, flags) ?? error.cause;
    }
    throw portInUse(error, flags) ?? error;
  }
  if (pair) reloadTlsOnHangup(server, flags.tlsCert!, flags.tlsKey!);
  if (server.bootstrap) printBootstrap(server.bootstrap);
  server.app.log.debug({ flags: heapFlags }, 'V8 heap settings applied');
  if (signals.started(server)) return new Promise(() => {});
  printServing(server, flags.host, tls !== undefined);
  // Keep the action pending: the process lives until a signal.
  await new Promise(() => {});
}
