import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A tmpfs of a fixed size that the test mounted: a real file system that runs out of space. */
export interface SmallFs {
  dir: string;
  /** Writes a filler file until the file system refuses (ENOSPC); resolves with its size. */
  fill(): number;
  /** Deletes the filler: the space is back. */
  unfill(): void;
  /** Unmounts (lazily if something still holds it) and removes the mount point. */
  unmount(): Promise<void>;
}

/**
 * Why this process cannot mount a small file system (not root, or mount refused, as in a
 * container without CAP_SYS_ADMIN), found by mounting and unmounting one; undefined when it can.
 * The only case in which the full-disk tests skip, and never in CI, which runs as root.
 */
export async function cannotMountSmallFs(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'mounting a small file system needs root';
  try {
    const fs = await mountSmallFs(1);
    await fs.unmount();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Mounts a tmpfs of `sizeMiB` under a new temporary directory. */
export async function mountSmallFs(sizeMiB: number): Promise<SmallFs> {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-small-fs-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=1777`, 'tmpfs', dir]);
  } catch (error) {
    rmdirSync(dir);
    throw new Error(`mount -t tmpfs failed: ${String((error as { stderr?: string }).stderr || (error as Error).message).trim()}`, { cause: error });
  }
  const filler = join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      let written = 0;
      try {
        // Large chunks first, then smaller ones down to single bytes: not one byte is left over.
        for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9, 1]) {
          const chunk = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              written += writeSync(fd, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    unfill() {
      rmSync(filler, { force: true });
    },
    async unmount() {
      try {
        await run('umount', [dir]);
      } catch {
        // A process of the test (a PostgreSQL that did not stop) still holds it: detach it now, freed when released.
        await run('umount', ['-l', dir]).catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
