import { createHash } from 'node:crypto';
import { constants, createReadStream, readdirSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The folders of a blob directory (`--blob-dir`): export files, asset files, provisioning packages. */
export const BLOB_FOLDERS = ['exports', 'assets', 'packages'] as const;

/** Where the files of a migrated deployment are: left in its data directory, or copied to the blob directory. */
export type BlobCopyPlan =
  | { kind: 'kept'; dir: string }
  | {
      kind: 'copy';
      from: string;
      to: string;
      /** Files to copy, relative to both directories. */
      files: string[];
      /** Files the blob directory already holds with the same content (copied by hand before). */
      present: number;
      /** Files the blob directory holds with other content: the copy is refused. */
      conflicts: string[];
    };

/** Which files of the data directory's blob folders must go to `blobDir` (nothing when it is the data directory). */
export async function planBlobCopy(dataDir: string, blobDir: string): Promise<BlobCopyPlan> {
  if (blobDir === dataDir) return { kind: 'kept', dir: dataDir };
  const plan = { kind: 'copy' as const, from: dataDir, to: blobDir, files: [] as string[], present: 0, conflicts: [] as string[] };
  for (const file of BLOB_FOLDERS.flatMap((folder) => regularFiles(dataDir, folder))) {
    const target = statSync(join(blobDir, file), { throwIfNoEntry: false });
    if (!target) plan.files.push(file);
    else if (target.isFile() && (await sameContent(join(dataDir, file), join(blobDir, file)))) plan.present++;
    else plan.conflicts.push(file);
  }
  return plan;
}

/** Copies the planned files (never replacing one), recording each file made in `made` so that a failure can remove them. */
export async function copyBlobFiles(plan: BlobCopyPlan, made: string[]): Promise<void> {
  if (plan.kind === 'kept') return;
  for (const file of plan.files) {
    const target = join(plan.to, file);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await copyFile(join(plan.from, file), target, constants.COPYFILE_EXCL);
    made.push(target);
    await chmod(target, 0o600);
  }
}

/** Removes the files a failed copy made. */
export async function removeFiles(made: string[]): Promise<void> {
  for (const file of made.splice(0)) await unlink(file).catch(() => undefined);
}

/** The regular files under `dir/folder` (recursively, sorted), as paths relative to `dir`; none when it is missing. */
export function regularFiles(dir: string, folder: string): string[] {
  const entries = (() => {
    try {
      return readdirSync(join(dir, folder), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  })();
  return entries
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return regularFiles(dir, path);
      return entry.isFile() ? [path] : [];
    });
}

async function sameContent(a: string, b: string): Promise<boolean> {
  if (statSync(a).size !== statSync(b).size) return false;
  const [first, second] = await Promise.all([sha256(a), sha256(b)]);
  return first === second;
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
