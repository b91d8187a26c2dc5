import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ArchiveWriter, type ArchivedFile } from './backup-archive.js';
import { regularFiles } from './blob-copy.js';
import { copyDatabase } from '../sqlite/online-backup.js';
import { SCANHUB_VERSION } from '../../version.js';

/**
 * `scanhub operator backup` (docs/backup.md): one file holding a consistent copy of a SQLite
 * deployment while `serve` runs, with a manifest of every file's SHA-256. Restoring it is
 * restore.ts.
 */

export const BACKUP_FORMAT = 'scanhub-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_PATH = 'manifest.json';
export const DATABASE_PATH = 'scanhub.db';
/** Folders taken from the data directory, and from the blob directory (`--blob-dir`). */
export const DATA_FOLDERS = ['keys', 'pki'] as const;
export const BLOB_FOLDERS_BACKED_UP = ['assets', 'packages'] as const;

/** The manifest, the archive's last entry. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_FORMAT_VERSION;
  /** When the database snapshot was taken, ISO 8601 UTC. */
  created: string;
  scanhub_version: string;
  sqlite_version: string;
  /** The data directory it was taken from. */
  data_dir: string;
  /** Every other entry of the archive, the database first. */
  files: ArchivedFile[];
}

/** Refused before anything was written (bad input): the CLI exits 2. */
export class BackupRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackupRefused';
  }
}

/** Whether an archive path is one a backup holds: the database, or a file under one of the folders. */
export function isBackupPath(path: string): boolean {
  if (path === DATABASE_PATH) return true;
  const [folder, ...rest] = path.split('/');
  return (
    [...DATA_FOLDERS, ...BLOB_FOLDERS_BACKED_UP].includes(folder as never) &&
    rest.length > 0 &&
    rest.every((segment) => segment !== '' && segment !== '.' && segment !== '..' && !segment.includes('\0'))
  );
}

/** Whether `path` is `dir` or lies under it (both absolute). */
export function isInside(path: string, dir: string): boolean {
  const rest = relative(dir, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}

/** Files being written under a temporary name (secrets, server certificates): never backed up. */
const TEMPORARY = /\.\d+\.[0-9a-f]{8}\.tmp$/;

export interface BackupOptions {
  dataDir: string;
  /** Where asset files and provisioning packages are (`--blob-dir`; the data directory by default). */
  blobDir: string;
  /** The backup file; replaced only at the very end, by a rename. */
  output: string;
  /** Told once the database snapshot is fixed. */
  onSnapshot?: (bytes: number) => void;
  /** Told as the database is copied. */
  onProgress?: (copiedPages: number, totalPages: number) => void;
  /** Ends the backup (nothing is left behind) with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Writes the backup of the deployment to `output`: first under a temporary name in its folder
 * (with the database copy beside it), renamed into place once complete and synced, so that a
 * failed or cancelled backup leaves nothing at `output` and no temporary file either.
 */
export async function backupDataDir(options: BackupOptions): Promise<BackupManifest> {
  const dataDir = resolve(options.dataDir);
  const blobDir = resolve(options.blobDir);
  const database = join(dataDir, DATABASE_PATH);
  if (!existsSync(database)) throw new BackupRefused(`no scanhub database in ${dataDir} (no scanhub.db): give --data-dir of the deployment to back up`);
  const output = resolve(options.output);
  for (const dir of new Set([dataDir, blobDir])) {
    if (isInside(output, dir)) throw new BackupRefused(`the backup file ${output} would be inside ${dir}, which it backs up: write it elsewhere (a backup kept with what it backs up is lost with it)`);
  }
  const temp = join(dirname(output), `.${basename(output)}.${randomBytes(4).toString('hex')}`);
  const databaseCopy = `${temp}.db.tmp`;
  const archiveFile = `${temp}.tmp`;
  const checkStop = () => {
    if (options.signal?.aborted) throw options.signal.reason;
  };
  let writer: ArchiveWriter | undefined;
  try {
    let created = new Date();
    const copy = await copyDatabase(database, databaseCopy, {
      onSnapshot: (pages, pageSize) => {
        created = new Date();
        options.onSnapshot?.(pages * pageSize);
      },
      onProgress: options.onProgress,
      shouldStop: () => (options.signal?.aborted ? (options.signal.reason as Error) : undefined),
    });
    writer = await ArchiveWriter.create(archiveFile, checkStop);
    const files: ArchivedFile[] = [];
    files.push((await addFile(writer, DATABASE_PATH, databaseCopy))!);
    await rm(databaseCopy);
    const sources = [...DATA_FOLDERS.map((folder) => ({ dir: dataDir, folder })), ...BLOB_FOLDERS_BACKED_UP.map((folder) => ({ dir: blobDir, folder }))];
    for (const { dir, folder } of sources) {
      for (const path of regularFiles(dir, folder).filter((file) => !TEMPORARY.test(file))) {
        checkStop();
        const added = await addFile(writer, path, join(dir, path));
        if (added) files.push(added);
      }
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_FORMAT_VERSION,
      created: created.toISOString(),
      scanhub_version: SCANHUB_VERSION,
      sqlite_version: copy.sqliteVersion,
      data_dir: dataDir,
      files,
    };
    await writer.addBuffer(MANIFEST_PATH, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    await writer.finish();
    writer = undefined;
    await rename(archiveFile, output);
    await syncFolder(dirname(output));
    return manifest;
  } catch (error) {
    await writer?.close();
    await rm(archiveFile, { force: true });
    await rm(databaseCopy, { force: true });
    throw error;
  }
}

/** Adds the file as `path`, or nothing when it has gone meanwhile (an expired package swept away). */
async function addFile(writer: ArchiveWriter, path: string, file: string): Promise<ArchivedFile | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    // Read through the open file: its content stays readable even if it is removed meanwhile.
    return await writer.addFile(path, handle, (await handle.stat()).size);
  } finally {
    await handle.close();
  }
}

/** Makes a rename in the folder durable (best effort: not every file system syncs folders). */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
