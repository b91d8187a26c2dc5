import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StorageFull } from '../ports/index.js';

/**
 * Below this many free bytes on the database's file system, an I/O error counts as the disk
 * being full: SQLite reports ENOSPC as SQLITE_FULL on the writes we tried (WAL appends, database
 * growth, checkpoints; docs/operations.md), but an fsync or a shared-memory page may report it as
 * SQLITE_IOERR_*, whose errno better-sqlite3 does not expose.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** What a probe writes: random, so that no compressing or deduplicating file system skips it. */
const PROBE_BYTES = randomBytes(1024 * 1024);

/** Free bytes for us on the file system of `dir`, or undefined when it cannot be asked. */
function freeBytes(dir: string): number | undefined {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** The error as StorageFull when SQLite refused a write of the database `file` for lack of space. */
export function storageFullOf(error: unknown, file: string): StorageFull | undefined {
  if (error instanceof StorageFull) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const dir = dirname(file);
  if (code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && (freeBytes(dir) ?? Infinity) < NEARLY_FULL_BYTES)) {
    // The directory stays out of the message (it reaches HTTP clients and /healthz); serve logs it.
    return new StorageFull(`the disk of the database is full (${code})`, { cause: error });
  }
  return undefined;
}

/**
 * The probe of a full SQLite store: writes and syncs 1 MiB beside the database file, then removes
 * it. Rejects while the file system has no room for it (ENOSPC, EDQUOT).
 */
export async function probeFileSystem(file: string): Promise<void> {
  const probe = join(dirname(file), '.storage-probe');
  try {
    const handle = await open(probe, 'w', 0o600);
    try {
      await handle.write(PROBE_BYTES);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } finally {
    await rm(probe, { force: true });
  }
}

const AsyncFunction = (async () => undefined).constructor;

/**
 * The repository with every SQLite "disk full" failure of its async methods (the port's) turned
 * into StorageFull, after telling `refused`; other failures pass as they are. Anything else is
 * the repository's own.
 */
export function mapStorageFull<T extends object>(repository: T, file: string, refused: (reason: string) => void): T {
  const fail = (error: unknown) => {
    const full = storageFullOf(error, file);
    if (!full) throw error;
    refused(full.message);
    throw full;
  };
  const mapped = Object.create(repository) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(repository))) {
    const method = (repository as Record<string, unknown>)[name];
    if (!(method instanceof AsyncFunction)) continue;
    mapped[name] = (...args: unknown[]) => (method as (...a: unknown[]) => Promise<unknown>).apply(repository, args).catch(fail);
  }
  return mapped as T;
}
