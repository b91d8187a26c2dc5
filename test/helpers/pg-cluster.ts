import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

/** A private PostgreSQL cluster (scripts/postgres.sh) that a test may stop and start again. */
export interface PgCluster {
  /** The superuser's URL to the `postgres` database over the cluster's unix socket. */
  url: string;
  dir: string;
  /** Stops the server (immediate shutdown: connections are cut), keeping its data. */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same socket. */
  start(): Promise<void>;
  /** Stops the server and removes the cluster. */
  destroy(): Promise<void>;
}

/** Starts a new cluster; its directory (data directory and all) under `parentDir` when given (a small file system). */
export async function startPgCluster(options: { parentDir?: string } = {}): Promise<PgCluster> {
  const env = options.parentDir ? { ...process.env, TMPDIR: options.parentDir } : process.env;
  const { stdout } = await run(SCRIPT, ['start'], { env });
  const url = /SCANHUB_TEST_DATABASE_URL='([^']+)'/.exec(stdout)?.[1];
  const dir = /SCANHUB_TEST_POSTGRES_DIR='([^']+)'/.exec(stdout)?.[1];
  if (!url || !dir) throw new Error(`scripts/postgres.sh start printed no URL: ${stdout}`);
  return {
    url,
    dir,
    stop: async () => {
      await run(SCRIPT, ['pause', dir]);
    },
    start: async () => {
      await run(SCRIPT, ['resume', dir]);
    },
    destroy: async () => {
      await run(SCRIPT, ['stop', dir]);
    },
  };
}
