import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { CUSTOMER, type TestServer } from './server.js';

export const BIN = fileURLToPath(new URL('../../bin/scanhub.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let defaultConfigHome: string | undefined;

/**
 * The config directory of CLI runs that name none: one per test process, so a saved profile
 * never lands in the developer's ~/.config and parallel test files never share one.
 */
function configHome(): string {
  defaultConfigHome ??= mkdtempSync(join(tmpdir(), 'scanhub-cli-config-'));
  return defaultConfigHome;
}

const homes: string[] = [];

// Registered when a test file imports this helper: removes that file's config directories.
afterAll(() => {
  if (defaultConfigHome) rmSync(defaultConfigHome, { recursive: true, force: true });
  defaultConfigHome = undefined;
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A fresh home and config directory: nothing saved yet. */
export function freshHome(): { HOME: string; XDG_CONFIG_HOME: string; profile: string } {
  const home = mkdtempSync(join(tmpdir(), 'scanhub-cli-'));
  homes.push(home);
  return { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), profile: join(home, 'config', 'scanhub', 'profile.json') };
}

/** A fresh home where `email` is logged in to the server at `url` (`scanhub login --password-stdin`). */
export async function loggedIn(url: string, email: string, password: string): Promise<Record<string, string> & { profile: string }> {
  const env = freshHome();
  const result = await runCli(['login', '--url', url, '--email', email, '--password-stdin'], { env, input: `${password}\n` });
  expect(outcome(result)).toMatchObject({ code: 0 });
  return env;
}

/** The environment of a CLI run as the test server's administrator (URL, IdToken, customer), plus `extra`. */
export const adminEnv = (t: TestServer, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken, SCANHUB_CUSTOMER: CUSTOMER, ...extra });

/** runCli with the environment first: for tests that switch homes, URLs and tokens per run. */
export const cli = (env: NodeJS.ProcessEnv, args: string[], input?: string): Promise<CliResult> => runCli(args, { env, input });

/** A run's exit code and output, to compare whole with toEqual. */
export const outcome = (result: CliResult) => ({ code: result.code, stdout: result.stdout, stderr: result.stderr });

/** Runs the built `scanhub` binary as a process (no TTY), feeding `input` on stdin. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      // A clean environment: no SCANHUB_* leaking in from the developer's shell.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', XDG_CONFIG_HOME: configHome(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** The built `scanhub` run on a pseudo-terminal (script(1)): stdout and stderr both go to it. */
export interface TerminalRun {
  /** Types into the terminal (`\r` is Enter, `\x03` Ctrl-C). */
  type(text: string): void;
  /** Everything the terminal showed so far (its line ends are CRLF). */
  output(): string;
  /** Resolves once the output matches (rejects if the process exits first). */
  shows(pattern: RegExp): Promise<void>;
  /** The exit code (script(1) passes the command's on). */
  exited: Promise<number | null>;
  /** Kills it if still running. */
  kill(): Promise<void>;
}

/**
 * Runs `node bin/scanhub.js ...args` on a pseudo-terminal, with a clean environment plus `env`
 * (NO_COLOR and TERM=dumb by default, so the output has no escape codes). `exec` makes scanhub the
 * terminal's foreground process itself, as when a person types the command.
 */
export function runOnTerminal(args: string[], env: NodeJS.ProcessEnv = {}): TerminalRun {
  const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
  const command = ['exec', ...[process.execPath, BIN, ...args].map(quote)].join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let output = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of [...waiters]) {
      if (!waiter.pattern.test(output)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  return {
    type: (text) => void child.stdin.write(text),
    output: () => output,
    shows: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(output)) return resolve();
        waiters.push({ pattern, resolve });
        void exited.then(() => reject(new Error(`exited before showing ${pattern}:\n${output}`)));
      }),
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A `scanhub` process that runs on (a tail, a simulator): what it printed so far, and waits on it. */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout (or stderr) holds the text: no timer, woken by each chunk. */
  printed(text: string, stream?: 'stdout' | 'stderr'): Promise<void>;
  kill(signal: NodeJS.Signals): void;
  /** The exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts the built `scanhub` binary with the arguments (no TTY, stdin closed) in a clean environment plus `env`. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', XDG_CONFIG_HOME: configHome(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((waiter) => waiter());
  child.stdout.on('data', (chunk: Buffer) => ((output.stdout += chunk.toString()), wake()));
  child.stderr.on('data', (chunk: Buffer) => ((output.stderr += chunk.toString()), wake()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => (resolve(code), wake())));
  return {
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    async printed(text, stream = 'stdout') {
      while (!output[stream].includes(text)) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`scanhub ${args.join(' ')} exited before printing ${text}:\n${output.stderr}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    kill: (signal) => child.kill(signal),
    exited,
  };
}
