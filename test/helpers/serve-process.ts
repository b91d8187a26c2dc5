import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './cli.js';
import { freePort } from './ports.js';
import type { TestDatabase } from './test-store.js';

export { freePort };

/** `scanhub serve` running as a child process, with what it printed so far. */
export interface ServeProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr matches (rejects if the process exits first). */
  stderrMatches(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `node ...nodeArgs bin/scanhub.js serve ...args` with a clean environment plus `env`; with
 * `database` (testDatabase(), for the PostgreSQL test store) its `--database URL` and master key too.
 */
export function spawnServe(args: string[], env: Record<string, string> = {}, database?: TestDatabase, nodeArgs: string[] = []): ServeProcess {
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'serve', ...args, ...(database?.args ?? [])], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...database?.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers: (() => void)[] = [];
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    for (const watcher of [...watchers]) watcher();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    stderrMatches: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = err.match(pattern);
          if (!match) return;
          watchers.splice(watchers.indexOf(check), 1);
          resolve(match);
        };
        watchers.push(check);
        check();
        void exited.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before printing ${pattern}:\n${err}`)));
      }),
  };
}

/** Sends SIGTERM and waits for the exit. */
export async function stop(serve: ServeProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGTERM');
  return serve.exited;
}

/**
 * `scanhub serve ...args` on free ports (HTTP and MQTT; HTTP on `port` when given, e.g. the port
 * of a deployment started again, whose public URL must stay); resolves once it serves, with its
 * URL and MQTT port. The process is pushed onto `running`, for the file's afterAll to stop.
 */
export async function serveOnFreePorts(running: ServeProcess[], args: string[], env: Record<string, string> = {}, port?: number) {
  port ??= await freePort();
  const mqttPort = await freePort();
  const process = spawnServe([...args, '--port', String(port), '--mqtt-port', String(mqttPort)], env);
  running.push(process);
  await process.stderrMatches(/scanhub is serving .*\n/);
  return { process, url: `http://127.0.0.1:${port}`, mqttPort };
}
