import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirBusy, LOCK_FILE, dataDirHolder, lockDataDir } from '../../../src/store/sqlite/data-dir-lock.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
const serves: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(serves.splice(0).map(stop));
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-lock-'));
  dirs.push(dir);
  return dir;
}

const BOOT = existsSync('/proc/sys/kernel/random/boot_id') ? readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() : '';

/** A process that runs until killed: a live pid that is not this one. */
async function liveProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); process.stdout.write("up")'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  return child.pid!;
}

/** The pid of a process that has exited. */
async function goneProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

function busy(run: () => unknown): DataDirBusy {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DataDirBusy);
    return error as DataDirBusy;
  }
  throw new Error('expected DataDirBusy');
}

describe('the data directory lock (scanhub.pid)', () => {
  it('is taken with the pid, the holder and the boot id (mode 0600), and removed on release', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir, 'serve');
    expect(lock.file).toBe(join(dir, LOCK_FILE));
    expect(readFileSync(lock.file, 'utf8')).toBe(`${process.pid}\nserve\n${BOOT}\n`);
    expect(statSync(lock.file).mode & 0o777).toBe(0o600);
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
    // Nothing else is left behind (the temporary file is gone too).
    expect(existsSync(join(dir, 'scanhub.pid.tmp'))).toBe(false);
  });

  it('creates a missing data directory (mode 0700)', () => {
    const dir = join(freshDir(), 'data');
    lockDataDir(dir, 'serve').release();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses while a live process holds it, naming that process; the holder is left alone', async () => {
    const dir = freshDir();
    const pid = await liveProcess();
    writeFileSync(join(dir, LOCK_FILE), `${pid}\nserve\n${BOOT}\n`);
    const error = busy(() => lockDataDir(dir, 'operator migrate'));
    expect(error.message).toBe(`the data directory ${dir} is in use by scanhub serve (pid ${pid})`);
    expect(error.holder).toEqual({ pid, holder: 'serve' });
    expect(dataDirHolder(dir)).toEqual({ pid, holder: 'serve' });
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${pid}\nserve\n${BOOT}\n`);
  });

  it.each([
    ['a process that has exited (a crash)', async () => `${await goneProcess()}\nserve\n${BOOT}\n`],
    ['this very process (a container restarted with the same pid)', async () => `${process.pid}\nserve\n${BOOT}\n`],
    ['an earlier boot of the machine, even when its pid runs again', async () => `${await liveProcess()}\nserve\nanother-boot\n`],
    ['a file that names no pid', async () => 'not a pid\n'],
  ])('takes over a stale lock: %s', async (_name, content) => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), await content());
    expect(dataDirHolder(dir)).toBeUndefined();
    const lock = lockDataDir(dir, 'serve');
    expect(readFileSync(lock.file, 'utf8')).toBe(`${process.pid}\nserve\n${BOOT}\n`);
    lock.release();
  });

  it('release removes only its own lock, not one another process took over since', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir, 'serve');
    writeFileSync(lock.file, '999999\nserve\n\n');
    lock.release();
    expect(readFileSync(lock.file, 'utf8')).toBe('999999\nserve\n\n');
  });
});

describe('one serve per SQLite data directory', () => {
  async function serve(dataDir: string): Promise<ServeProcess> {
    const process = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', '0'], { SCANHUB_ADMIN_PASSWORD: 'admin-password-123' });
    serves.push(process);
    return process;
  }

  it('a second serve on the same data directory exits 2 with one line; the first goes on and frees the directory at stop', async () => {
    const dataDir = join(freshDir(), 'data');
    const first = await serve(dataDir);
    await first.stderrMatches(/scanhub is serving/);
    const second = await serve(dataDir);
    expect(await second.exited).toEqual({ code: 2, signal: null });
    expect(second.stderr()).toBe(
      `scanhub: the data directory ${dataDir} is in use by scanhub serve (pid ${first.child.pid}): stop it first, two processes never share a data directory\n`,
    );
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).toBe(`${first.child.pid}\nserve\n${BOOT}\n`);
    expect(await stop(first)).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  });

  it('after a crash (SIGKILL) the next serve takes the directory over', async () => {
    const dataDir = join(freshDir(), 'data');
    const crashed = await serve(dataDir);
    await crashed.stderrMatches(/scanhub is serving/);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).toBe(`${crashed.child.pid}\nserve\n${BOOT}\n`);
    const next = await serve(dataDir);
    await next.stderrMatches(/scanhub is serving/);
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).toBe(`${next.child.pid}\nserve\n${BOOT}\n`);
  });
});
