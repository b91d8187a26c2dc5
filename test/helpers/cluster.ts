import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { portFreeOn } from './ports.js';
import { freshDatabase } from './postgres.js';
import { spawnServe, stop, type ServeProcess } from './serve-process.js';
import { TEST_MASTER_KEY } from './test-store.js';
import { until } from './until.js';

// Several `scanhub serve` processes on one PostgreSQL database behind a real HAProxy running the
// shipped deploy/haproxy.cfg, laid out as the README's "Running several instances": the balancer on
// 127.0.0.1, the instances on 127.0.0.2 and 127.0.0.3, every one on the same ports (so the
// mqtt_endpoint an instance hands out, the balancer's host and the instances' MQTT port, reaches
// the balancer).

/** The configuration operators copy; the test runs this very file. */
export const HAPROXY_CFG = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url));

/** The addresses of deploy/haproxy.cfg's two server lines. */
const INSTANCE_HOSTS = ['127.0.0.2', '127.0.0.3'];
const BALANCER_HOST = '127.0.0.1';

export const CLUSTER_ADMIN_EMAIL = 'admin@localhost';
export const CLUSTER_ADMIN_PASSWORD = 'cluster-admin-password';

/** One `serve` process of the cluster. */
export interface ClusterInstance {
  /** The name of its server lines in haproxy.cfg: scanhub1, scanhub2. */
  name: string;
  host: string;
  /** Its own HTTP API, past the balancer. */
  url: string;
  serve: ServeProcess;
  /** kill -9, resolved once the process is gone. */
  kill(): Promise<void>;
}

/** A server line as HAProxy's stats page reports it. */
export interface ServerState {
  backend: string;
  server: string;
  /** UP, DOWN, ... */
  status: string;
  /** Result of the last check: L4OK, L7OK, L4CON, ... */
  check: string;
  /** Connections open now. */
  sessions: number;
}

export interface Cluster {
  instances: ClusterInstance[];
  /** The balancer's HTTP API (also the instances' --public-url). */
  url: string;
  /** The MQTT port of the balancer and of every instance. */
  mqttPort: number;
  /** The PostgreSQL database of every instance. */
  database: string;
  blobDir: string;
  /** What HAProxy printed so far. */
  haproxyLog(): string;
  /** Every server line of the balancer, from its stats page. */
  servers(): Promise<ServerState[]>;
  /** Resolves once the stats say so of every server line (polled: HAProxy announces nothing). */
  serversSatisfy(ok: (servers: ServerState[]) => boolean, what: string, timeoutMs?: number): Promise<ServerState[]>;
  /** Stops HAProxy and every instance still running, removes the directories. */
  close(): Promise<void>;
}

/** The stats page's CSV: one row per frontend, backend and server line. */
function parseStats(csv: string): ServerState[] {
  const [header, ...rows] = csv.trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  return rows
    .map((line) => line.split(','))
    .filter((row) => !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')) && at(row, 'pxname') !== 'stats')
    .map((row) => ({
      backend: at(row, 'pxname'),
      server: at(row, 'svname'),
      status: at(row, 'status'),
      check: at(row, 'check_status').replace(/^\* /, ''),
      sessions: Number(at(row, 'scur')),
    }));
}

/** Every server line UP, and its last check passed (not only the UP HAProxy assumes before checking). */
export const allUp = (servers: ServerState[]) => servers.length > 0 && servers.every((s) => s.status === 'UP' && /^L[47]OK$/.test(s.check));

/**
 * Starts the instances at the same moment on a fresh database (each with its own data directory,
 * one shared blob directory, the same master key), waits until every one serves, then starts
 * HAProxy with deploy/haproxy.cfg and waits until its checks find every instance up.
 */
export async function startCluster(options: { env?: Record<string, string> } = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-cluster-'));
  const blobDir = join(dir, 'blobs');
  const database = await freshDatabase();
  const hosts = [BALANCER_HOST, ...INSTANCE_HOSTS];
  const port = await portFreeOn(hosts);
  const mqttPort = await portFreeOn(hosts);
  const statsPort = await portFreeOn([BALANCER_HOST]);
  const url = `http://${BALANCER_HOST}:${port}`;

  const instances: ClusterInstance[] = INSTANCE_HOSTS.map((host, i) => {
    const serve = spawnServe(
      [
        '--host', host,
        '--port', String(port),
        '--mqtt-port', String(mqttPort),
        '--data-dir', join(dir, `instance-${i + 1}`),
        '--blob-dir', blobDir,
        '--database', database,
        '--public-url', url,
        '--mqtt-public-host', BALANCER_HOST,
        '--mqtt-public-port', String(mqttPort),
        '--trust-proxy', BALANCER_HOST,
        '--mqtt-proxy-protocol',
      ],
      {
        SCANHUB_MASTER_KEY: TEST_MASTER_KEY,
        SCANHUB_ADMIN_PASSWORD: CLUSTER_ADMIN_PASSWORD,
        SCANHUB_CUSTOMER_ID: 'acme',
        SCANHUB_LOG_LEVEL: 'warn',
        ...options.env,
      },
    );
    return {
      name: `scanhub${i + 1}`,
      host,
      url: `http://${host}:${port}`,
      serve,
      kill: async () => {
        serve.child.kill('SIGKILL');
        await serve.exited;
      },
    };
  });

  let haproxy: ChildProcess | undefined;
  let haproxyLog = '';
  let haproxyFailed: Error | undefined;
  const close = async () => {
    if (haproxy && !haproxyFailed && haproxy.exitCode === null && haproxy.signalCode === null) {
      const exited = new Promise((resolve) => haproxy!.once('exit', resolve));
      haproxy.kill('SIGKILL');
      await exited;
    }
    await Promise.all(instances.map((instance) => stop(instance.serve)));
    rmSync(dir, { recursive: true, force: true });
  };

  const servers = async () => {
    const response = await request(`http://${BALANCER_HOST}:${statsPort}/;csv`);
    return parseStats(await response.body.text());
  };
  // HAProxy announces no change of its servers' state: its stats page is asked until it shows it.
  const serversSatisfy = (ok: (servers: ServerState[]) => boolean, what: string, timeoutMs = 20_000) =>
    until(
      async () => {
        const states = await servers().catch(() => []);
        if (ok(states)) return states;
        if (haproxyFailed) throw new Error(`cannot run haproxy (Debian's package puts it in /usr/sbin, which must be on PATH): ${haproxyFailed.message}`);
        if (haproxy?.exitCode !== null) throw new Error(`haproxy exited (${haproxy?.exitCode}):\n${haproxyLog}`);
        return states;
      },
      ok,
      { what: `the balancer's servers ${what}`, timeoutMs },
    );

  try {
    await Promise.all(instances.map((instance) => instance.serve.stderrMatches(/scanhub is serving/)));
    haproxy = spawn('haproxy', ['-db', '-f', HAPROXY_CFG], {
      env: {
        PATH: process.env.PATH,
        SCANHUB_LB_API: `${BALANCER_HOST}:${port}`,
        SCANHUB_LB_MQTT: `${BALANCER_HOST}:${mqttPort}`,
        SCANHUB_LB_STATS: `${BALANCER_HOST}:${statsPort}`,
        ...Object.fromEntries(
          instances.flatMap((instance, i) => [
            [`SCANHUB_${i + 1}_API`, `${instance.host}:${port}`],
            [`SCANHUB_${i + 1}_MQTT`, `${instance.host}:${mqttPort}`],
          ]),
        ),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    haproxy.on('error', (error) => (haproxyFailed = error));
    haproxy.stderr!.on('data', (chunk: Buffer) => (haproxyLog += chunk.toString()));
    await serversSatisfy(allUp, 'all up');
  } catch (error) {
    await close();
    throw error;
  }
  return { instances, url, mqttPort, database, blobDir, haproxyLog: () => haproxyLog, servers, serversSatisfy, close };
}
