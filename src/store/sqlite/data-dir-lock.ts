import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readIfExists } from './secrets.js';

/**
 * The lock of a SQLite data directory, `scanhub.pid`: the pid, command and boot of the one process
 * that has the directory to itself (`serve`, `operator migrate`; two would each run an ingest
 * writer over one file). A lock whose process is gone is stale and taken over: signal 0 does not
 * reach it, the machine rebooted since (another boot id), or its pid is this process's own (a
 * container restarted with the same pid). Operator commands that only read or add rows take none.
 */
export const LOCK_FILE = 'scanhub.pid';

/** The process that holds a data directory. */
export interface LockHolder {
  pid: number;
  /** What it runs: `serve`, `operator migrate`. */
  holder: string;
}

/** Thrown when a live process holds the data directory. */
export class DataDirBusy extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(`the data directory ${dataDir} is in use by scanhub ${holder.holder} (pid ${holder.pid})`);
    this.name = 'DataDirBusy';
  }
}

/** A lock taken: released by `release()`, or when the process exits. */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

const BOOT_ID = '/proc/sys/kernel/random/boot_id';

/** This boot's id (Linux), or '' where there is none. */
function bootId(): string {
  return readIfExists(BOOT_ID)?.trim() ?? '';
}

interface LockRecord extends LockHolder {
  boot: string;
}

function parse(text: string): LockRecord | undefined {
  const [pid = '', holder = '', boot = ''] = text.split('\n');
  return /^[1-9]\d*$/.test(pid) ? { pid: Number(pid), holder: holder || 'serve', boot } : undefined;
}

/** Whether the recorded process runs: this boot, not this process, and signal 0 reaches it (EPERM: it runs as another user). */
function isLive(record: LockRecord): boolean {
  const boot = bootId();
  if (record.boot && boot && record.boot !== boot) return false;
  if (record.pid === process.pid) return false;
  try {
    process.kill(record.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live process that holds the data directory, or undefined (no lock, or a stale one). */
export function dataDirHolder(dataDir: string): LockHolder | undefined {
  const stored = readIfExists(join(dataDir, LOCK_FILE));
  const record = stored === undefined ? undefined : parse(stored);
  return record && isLive(record) ? { pid: record.pid, holder: record.holder } : undefined;
}

/**
 * Takes the data directory for this process (creating the directory when missing), or throws
 * DataDirBusy naming the live process that holds it. The file is written whole under a temporary
 * name and published with a hard link, which never replaces: of two processes only one publishes.
 */
export function lockDataDir(dataDir: string, holder: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, LOCK_FILE);
  const content = `${process.pid}\n${holder}\n${bootId()}\n`;
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, content, { mode: 0o600, flag: 'wx' });
  try {
    // A few rounds: each either publishes, meets a live holder, or clears a stale lock and retries.
    for (let round = 0; round < 5; round++) {
      try {
        linkSync(temp, file);
        return held(file, content);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const stored = readIfExists(file);
      if (stored === undefined) continue;
      const record = parse(stored);
      if (record && isLive(record)) throw new DataDirBusy(dataDir, { pid: record.pid, holder: record.holder });
      removeStale(file, stored);
    }
    throw new Error(`cannot take ${file}: other processes keep taking it`);
  } finally {
    unlinkSync(temp);
  }
}

/**
 * Removes a stale lock file: moved aside first, so that a lock another process published after
 * it was read (and is therefore live) is put back instead of removed.
 */
function removeStale(file: string, stored: string): void {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.stale`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (readFileSync(aside, 'utf8') !== stored) linkSync(aside, file);
  } catch (error) {
    // EEXIST: yet another process published meanwhile; its lock stands.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(aside);
  }
}

function held(file: string, content: string): DataDirLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    // Only our own: a lock taken over as stale (this process was stopped, not ended) is another's now.
    if (readIfExists(file) !== content) return;
    try {
      unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  };
  process.on('exit', release);
  return { file, release };
}
