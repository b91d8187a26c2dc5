import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ArchiveDamaged, readArchive, type ArchiveContent } from './backup-archive.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BLOB_FOLDERS_BACKED_UP,
  BackupRefused,
  DATABASE_PATH,
  MANIFEST_PATH,
  isBackupPath,
  isInside,
  syncFolder,
  type BackupManifest,
} from './backup.js';
import { copyBlobFiles, planBlobCopy, removeFiles } from './blob-copy.js';
import { DataDirBusy, dataDirHolder, lockDataDir, type DataDirLock } from '../sqlite/data-dir-lock.js';
import { integrityProblems } from '../sqlite/online-backup.js';

/**
 * `scanhub operator restore` (docs/backup.md "Restore"): everything is unpacked and checked in a
 * folder beside the target, and only a backup that passes is moved into place, by renames, so a
 * refusal or a damaged file leaves the target as it was.
 */

/** The manifest may not be larger than this (a backup of a million asset files stays far below). */
const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

export interface RestoreOptions {
  /** The backup file. */
  file: string;
  dataDir: string;
  /** Where asset files and packages go (`--blob-dir`; the data directory by default). */
  blobDir: string;
  /** Replace a data directory that is not empty (never one a running `serve` holds). */
  force: boolean;
  /** Told before the database is checked (a large one takes a while). */
  onCheck?: () => void;
  signal?: AbortSignal;
}

/** Restores the backup into the data directory; throws BackupRefused (nothing done), ArchiveDamaged (the file), or any other failure. */
export async function restoreDataDir(options: RestoreOptions): Promise<BackupManifest> {
  const file = resolve(options.file);
  const dataDir = resolve(options.dataDir);
  const blobDir = resolve(options.blobDir);
  const kind = statSync(file, { throwIfNoEntry: false });
  if (!kind) throw new BackupRefused(`no backup file ${file}`);
  if (!kind.isFile()) throw new BackupRefused(`${file} is not a backup file (not a regular file)`);
  if (isInside(file, dataDir)) throw new BackupRefused(`the backup file ${file} is inside ${dataDir}, which the restore replaces: move it elsewhere first`);
  const target = await claimTarget(dataDir, options.force);
  const checkStop = () => {
    if (options.signal?.aborted) throw options.signal.reason;
  };
  await mkdir(dirname(dataDir), { recursive: true });
  // Beside the target, so that one rename puts it in place; inside it when it is a mount point
  // (a volume of its own), which no rename can replace and whose disk is the one to fill.
  const staging = await mkdtemp(target.mountPoint ? join(dataDir, STAGING_PREFIX) : join(dirname(dataDir), `.${basename(dataDir)}.restore-`));
  const blobFiles: string[] = [];
  try {
    const content = await readArchive(file, (path) => placeEntry(staging, path), checkStop);
    const manifest = verifyManifest(content);
    checkStop();
    options.onCheck?.();
    const problems = integrityProblems(join(staging, DATABASE_PATH));
    if (problems.length) throw new ArchiveDamaged(`its scanhub.db fails PRAGMA integrity_check: ${problems.join('; ')}`);
    checkStop();
    if (blobDir !== dataDir) await moveBlobFiles(staging, blobDir, blobFiles);
    if (target.mountPoint) await moveIntoMountPoint(staging, dataDir, target.lock);
    else await putInPlace(staging, dataDir);
    await syncFolder(dirname(dataDir));
    return manifest;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    await removeFiles(blobFiles);
    throw error;
  } finally {
    target.lock?.release();
  }
}

/** What restoring into the target takes: a lock on it (when it exists and is not empty, or is a mount point). */
interface Target {
  lock?: DataDirLock;
  /** The target is a mount point: staged inside it, moved in entry by entry. */
  mountPoint: boolean;
}

/** Where a restore onto a mount point stages, inside the target; and where it moves what it replaces. */
const STAGING_PREFIX = '.scanhub-restore-';
const REPLACED_PREFIX = '.scanhub-replaced-';
/** A file system's own folder, which neither makes a directory non-empty nor is ever moved. */
const FILE_SYSTEM_ENTRIES = ['lost+found'];

/**
 * Checks the target: a directory nobody holds, empty unless `force`. One that is not empty, or
 * is a mount point, is locked for the restore (so that no `serve` starts on it meanwhile); an
 * empty or missing one needs no lock, since any file a starting `serve` wrote there would make
 * the final rename fail.
 */
async function claimTarget(dataDir: string, force: boolean): Promise<Target> {
  const kind = statSync(dataDir, { throwIfNoEntry: false });
  if (!kind) return { mountPoint: false };
  if (!kind.isDirectory()) throw new BackupRefused(`${dataDir} is not a directory: give --data-dir a new or empty directory`);
  const holder = dataDirHolder(dataDir);
  if (holder) throw busy(new DataDirBusy(dataDir, holder));
  const empty = (await readdir(dataDir)).every((name) => FILE_SYSTEM_ENTRIES.includes(name));
  if (!empty && !force) throw new BackupRefused(`the data directory ${dataDir} is not empty: restore into a new or empty directory, or pass --force to replace what it holds`);
  const mountPoint = kind.dev !== statSync(dirname(dataDir)).dev;
  if (empty && !mountPoint) return { mountPoint };
  try {
    return { lock: lockDataDir(dataDir, 'operator restore'), mountPoint };
  } catch (error) {
    if (error instanceof DataDirBusy) throw busy(error);
    throw error;
  }
}

const busy = (error: DataDirBusy) => new BackupRefused(`${error.message}: stop it first, restore never replaces a data directory that a running serve holds`);

/** Where an entry is unpacked: the manifest into memory, the files of a data directory into the staging folder. */
function placeEntry(staging: string, path: string) {
  if (path === MANIFEST_PATH) return { memory: MANIFEST_MAX_BYTES };
  if (!isBackupPath(path)) throw new ArchiveDamaged(`it holds ${JSON.stringify(path)}, which is no file of a scanhub data directory`);
  return { file: join(staging, path) };
}

/** The manifest, checked against what the archive held: every file present, its size and SHA-256 the same, nothing else. */
function verifyManifest(content: ArchiveContent): BackupManifest {
  const text = content.kept.get(MANIFEST_PATH);
  if (text === undefined) throw new ArchiveDamaged('it has no manifest.json, so it is incomplete or not a scanhub backup');
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text.toString('utf8')) as BackupManifest;
  } catch (error) {
    throw new ArchiveDamaged(`its manifest.json is not JSON (${(error as Error).message})`, { cause: error });
  }
  if (manifest?.format !== BACKUP_FORMAT) throw new ArchiveDamaged(`its manifest.json does not describe a scanhub backup (format ${JSON.stringify(manifest?.format)})`);
  if (manifest.version !== BACKUP_FORMAT_VERSION) {
    throw new ArchiveDamaged(`it is a backup of format ${JSON.stringify(manifest.version)}, and this scanhub reads format ${BACKUP_FORMAT_VERSION}: restore it with the scanhub version that wrote it (${manifest.scanhub_version})`);
  }
  if (!Array.isArray(manifest.files)) throw new ArchiveDamaged('its manifest.json lists no files');
  const listed = new Set<string>();
  for (const entry of manifest.files) {
    const found = content.files.get(entry?.path);
    if (!found) throw new ArchiveDamaged(`${JSON.stringify(entry?.path)} is listed in its manifest but missing from it`);
    if (found.size !== entry.size) throw new ArchiveDamaged(`its ${entry.path} has ${found.size} bytes where the manifest says ${entry.size}`);
    if (found.sha256 !== entry.sha256) throw new ArchiveDamaged(`its ${entry.path} does not match the SHA-256 in the manifest`);
    listed.add(entry.path);
  }
  for (const path of content.files.keys()) {
    if (path !== MANIFEST_PATH && !listed.has(path)) throw new ArchiveDamaged(`it holds ${path}, which its manifest does not list`);
  }
  if (!listed.has(DATABASE_PATH)) throw new ArchiveDamaged('it holds no scanhub.db');
  return manifest;
}

/** Copies the staged asset files and packages to the blob directory (refusing other content under their names), then drops them from the staging folder. */
async function moveBlobFiles(staging: string, blobDir: string, made: string[]): Promise<void> {
  const plan = await planBlobCopy(staging, blobDir);
  if (plan.kind === 'copy' && plan.conflicts.length) {
    throw new BackupRefused(`--blob-dir ${blobDir} already holds ${plan.conflicts[0]} with other content than the backup's: give an empty --blob-dir, or remove it`);
  }
  await copyBlobFiles(plan, made);
  for (const folder of BLOB_FOLDERS_BACKED_UP) await rm(join(staging, folder), { recursive: true, force: true });
}

/**
 * Moves the staging folder to the target. A missing or empty target is replaced in one rename;
 * a non-empty one (with --force) is moved aside first, put back if the second rename fails, and
 * removed once the restored directory is in place.
 */
async function putInPlace(staging: string, dataDir: string): Promise<void> {
  const kind = statSync(dataDir, { throwIfNoEntry: false });
  if (!kind || (await readdir(dataDir)).length === 0) {
    try {
      await rename(staging, dataDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new Error(`${dataDir} was written to while the backup was being restored: nothing was restored`, { cause: error });
      throw error;
    }
    return;
  }
  const aside = join(dirname(dataDir), `.${basename(dataDir)}.replaced-${randomBytes(4).toString('hex')}`);
  await rename(dataDir, aside);
  try {
    await rename(staging, dataDir);
  } catch (error) {
    await rename(aside, dataDir);
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

/**
 * Moves the staged entries into the target, a mount point, one rename each: what it held (with
 * --force) is moved aside into a folder of its own first, and removed at the end; the lock and
 * the file system's own folder stay. A failed rename moves everything back.
 */
async function moveIntoMountPoint(staging: string, dataDir: string, lock: DataDirLock | undefined): Promise<void> {
  const keep = new Set([basename(staging), ...FILE_SYSTEM_ENTRIES, ...(lock ? [basename(lock.file)] : [])]);
  const old = (await readdir(dataDir)).filter((name) => !keep.has(name));
  const aside = await mkdtemp(join(dataDir, REPLACED_PREFIX));
  const moved: [string, string][] = [];
  try {
    for (const name of old) moved.push(await move(join(dataDir, name), join(aside, name)));
    for (const name of await readdir(staging)) moved.push(await move(join(staging, name), join(dataDir, name)));
  } catch (error) {
    for (const [from, to] of moved.reverse()) await rename(to, from).catch(() => undefined);
    await rm(aside, { recursive: true, force: true });
    throw error;
  }
  await chmod(dataDir, 0o700);
  await rm(aside, { recursive: true, force: true });
  await rm(staging, { recursive: true, force: true });
}

async function move(from: string, to: string): Promise<[string, string]> {
  await rename(from, to);
  return [from, to];
}
