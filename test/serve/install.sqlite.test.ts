import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// DESIGN.md "CLI conventions": `npm pack` makes a tarball that `npm install -g` installs with the
// production dependencies only, after which `scanhub --version` and `scanhub serve` run. The
// install, not the store, is under test: SQLite only. It downloads the dependencies (minutes).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'scanhub-install-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command to its end (without blocking the test worker, which reports meanwhile); its exit code and output. */
function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A copy of the checkout's sources (not its dist/, which other tests run meanwhile) with its
 * node_modules: `npm pack` there builds first (prepare), as it would in a fresh clone.
 */
async function packedTarball(): Promise<string> {
  const source = join(work, 'source');
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'bin', 'src', 'console', 'scripts', 'README.md']) {
    cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
  const packed = await run('npm', ['pack', '--pack-destination', work, '--json'], source);
  expect(packed.code, packed.stderr).toBe(0);
  const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  const paths = files.map((f) => f.path);
  // The build output whole (the console too), and nothing to compile.
  expect(paths).toEqual(expect.arrayContaining(['bin/scanhub.js', 'dist/cli/main.js', 'dist/serve/start.js', 'dist/console/index.html', 'package.json']));
  expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/') || p.endsWith('.ts'))).toEqual([]);
  return join(work, filename);
}

describe('the packed tarball', () => {
  it('installs with production dependencies only; scanhub --version and scanhub serve run', { timeout: 15 * 60_000 }, async () => {
    const tarball = await packedTarball();
    expect(tarball).toBe(join(work, `scanhub-${version}.tgz`));
    const prefix = join(work, 'prefix');
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--omit=dev', '--no-audit', '--no-fund', tarball], work);
    expect(installed.code, installed.stderr).toBe(0);
    const scanhub = join(prefix, 'bin', 'scanhub');
    // No dev dependency came along: nothing could have compiled TypeScript.
    expect((await run('node', ['-e', "require.resolve('typescript')"], join(prefix, 'lib', 'node_modules', 'scanhub'))).code).not.toBe(0);

    expect(await run(scanhub, ['--version'], work)).toEqual({ code: 0, stdout: `scanhub ${version}\n`, stderr: '' });

    const serve = spawn(scanhub, ['serve', '--data-dir', join(work, 'data'), '--port', '0', '--mqtt-port', '0', '--log-format', 'json'], {
      env: { PATH: process.env.PATH, HOME: work },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const serving = new Promise<string>((resolve, reject) => {
      serve.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /scanhub is serving (\S+) /.exec(stderr);
        if (match) resolve(match[1]!);
      });
      serve.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${stderr}`)));
    });
    const url = await serving;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    serve.kill('SIGTERM');
    expect(await new Promise((resolve) => serve.on('exit', resolve))).toBe(0);
  });
});
