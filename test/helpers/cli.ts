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
