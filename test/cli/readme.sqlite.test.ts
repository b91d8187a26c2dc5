import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

/**
 * The README as a test: every `console` and `sh` block of its "Quick start" (with the CLI and
 * HTTP blocks under it) and of "CI: an API key" runs in order, as written, against a fresh
 * `serve` in a fresh HOME and data directory, so that the README cannot drift from the CLI.
 * A block right after `<!-- not run by test/cli/readme.sqlite.test.ts: why -->` is skipped. The
 * few liberties, each for a reason:
 * - `serve` runs on free ports (tests run side by side), and its URL replaces the README's;
 * - a log-in reads its password from stdin (`--password-stdin` added), an invitation is redeemed
 *   in a HOME of its own (the invited user's machine);
 * - `<token>` and `<key>` are taken from the output of the command that printed them;
 * - `simulate` runs 3 s rather than its `--duration`; `events tail` runs until the end and stops
 *   on SIGTERM, as when a person presses Ctrl-C;
 * - `eula.txt` and `app.apk`, the files an operator would have, are made up.
 * The quick start is SQLite's; PostgreSQL would test nothing new here.
 */
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const SECTIONS = ['## Quick start', '### CI: an API key'];
const SKIP = '<!-- not run by test/cli/readme.sqlite.test.ts';

/** The commands of the blocks to run, in order. */
function readmeCommands(): string[] {
  const commands: string[] = [];
  for (const heading of SECTIONS) {
    const start = README.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThan(0);
    const level = heading.split(' ')[0]!;
    const next = README.slice(start + heading.length + 2).search(new RegExp(`\\n#{1,${level.length}} `));
    const section = README.slice(start, next < 0 ? undefined : start + heading.length + 2 + next);
    for (const match of section.matchAll(/(?:^|\n)([^\n]*)\n```(console|sh)\n([\s\S]*?)\n```/g)) {
      if (match[1]!.startsWith(SKIP)) continue;
      const lines = match[3]!.split('\n');
      const wanted = match[2] === 'console' ? lines.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2)) : lines.filter((l) => l.trim() && !l.startsWith('#'));
      commands.push(...wanted.map((line) => line.replace(/\s+#\s.*$/, '').trim()));
    }
  }
  return commands;
}

const work = mkdtempSync(join(tmpdir(), 'scanhub-readme-'));
const background: ChildProcess[] = [];
afterAll(() => {
  for (const child of background) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** `scanhub` and `npx scanhub` on the PATH, both the built CLI of this checkout. */
function shims(): string {
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'scanhub'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  writeFileSync(join(bin, 'npx'), `#!/bin/sh\n[ "$1" = scanhub ] && shift\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  for (const file of ['scanhub', 'npx']) chmodSync(join(bin, file), 0o755);
  return bin;
}

function home(name: string): Record<string, string> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return { HOME: dir, XDG_CONFIG_HOME: join(dir, '.config') };
}

/** Runs one line in bash in the work folder; its exit code and output. */
function bash(line: string, env: Record<string, string>, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Starts `serve` as the quick start does, on free ports; its URL and generated password. */
async function serve(env: Record<string, string>): Promise<{ url: string; password: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--mqtt-port', '0', '--log-format', 'json'], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
  background.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /scanhub is serving (\S+) /.exec(stderr)?.[1];
      const password = /Generated administrator password \(shown once, store it now\): (\S+)/.exec(stderr)?.[1];
      if (url && password) resolve({ url, password });
    });
    child.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${stderr}`)));
  });
}

describe('README.md', () => {
  it('runs top to bottom: quick start, the CLI, an API key for CI', { timeout: 180_000 }, async () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThan(20);
    writeFileSync(join(work, 'eula.txt'), 'You may use this app.\n');
    writeFileSync(join(work, 'app.apk'), 'not really an app');
    let env: Record<string, string> = { PATH: `${shims()}:${process.env.PATH}`, NO_COLOR: '1', ...home('home') };
    const values: Record<string, string> = {};
    let url = '';
    let password = '';
    const tails: ChildProcess[] = [];

    for (const written of commands) {
      let line = written.replace(/https?:\/\/(127\.0\.0\.1:8080|scanhub\.example\.com)/g, url || '$&');
      line = line.replace(/<([a-z-]+)>/g, (placeholder, name: string) => {
        expect(values[name], `${placeholder} in "${written}" comes from no earlier output`).toBeDefined();
        return values[name]!;
      });
      if (/^(npx )?scanhub serve$/.test(line)) {
        ({ url, password } = await serve(env));
        continue;
      }
      if (line.startsWith('export ')) {
        for (const [, name, value] of line.slice(7).matchAll(/(\w+)=(\S+)/g)) env = { ...env, [name!]: value! };
        continue;
      }
      if (/ events tail\b/.test(line)) {
        const tail = spawn('bash', ['-c', `exec ${line}`], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
        background.push(tail);
        tails.push(tail);
        continue;
      }
      let input = '';
      let runEnv = env;
      if (/ login .*--invitation/.test(line)) {
        [line, input, runEnv] = [`${line} --password-stdin`, 'adas-own-password-1\n', { ...env, ...home('ada') }];
      } else if (/ login .*--email/.test(line)) {
        [line, input] = [`${line} --password-stdin`, `${password}\n`];
      }
      line = line.replace(/ simulate (.*)--duration \S+/, ' simulate $1--duration 3s');
      const result = await bash(line, runEnv, input);
      expect(result.code, `${written}\n${result.stderr}`).toBe(0);
      values.token = /^invitation_token\t(\S+)$/m.exec(result.stdout)?.[1] ?? values.token!;
      values.key = /^(shk_[A-Za-z0-9_-]{43})$/m.exec(result.stdout)?.[1] ?? values.key!;
    }
    for (const tail of tails) {
      tail.kill('SIGTERM');
      expect(await new Promise((resolve) => tail.on('exit', resolve))).toBe(0);
    }
  });
});
