import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

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

// Registered when a test file imports this helper: removes that file's config directory.
afterAll(() => {
  if (defaultConfigHome) rmSync(defaultConfigHome, { recursive: true, force: true });
  defaultConfigHome = undefined;
});

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
