import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Header, Pax, Parser, type ReadEntry } from 'tar';

/**
 * The container of a backup (docs/backup.md "The file"), a POSIX tar file: node-tar encodes the
 * headers and parses the file, and the content goes through here, so that each file is hashed in
 * the one pass that writes or reads it.
 */

/** A file in the archive as its manifest lists it. */
export interface ArchivedFile {
  path: string;
  size: number;
  sha256: string;
}

/** The archive is not a well-formed tar file: truncated, damaged, or something else entirely. */
export class ArchiveDamaged extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ArchiveDamaged';
  }
}

const BLOCK = 512;
const CHUNK = 1 << 20;

/** Writes a tar file entry by entry; `finish()` ends it (and syncs it), `close()` gives up. */
export class ArchiveWriter {
  private constructor(
    private readonly handle: FileHandle,
    private readonly mtime: Date,
    private readonly checkStop: () => void,
  ) {}

  /** Creates `file` (which must not exist) with mode 0600; `checkStop` may throw to end a long write. */
  static async create(file: string, checkStop: () => void = () => undefined): Promise<ArchiveWriter> {
    return new ArchiveWriter(await open(file, 'wx', 0o600), new Date(), checkStop);
  }

  /** Adds the first `size` bytes of the open file `source` as `path`; fails if it has fewer. */
  async addFile(path: string, source: FileHandle, size: number): Promise<ArchivedFile> {
    await this.header(path, size);
    const hash = createHash('sha256');
    let written = 0;
    if (size > 0) {
      for await (const chunk of source.createReadStream({ start: 0, end: size - 1, highWaterMark: CHUNK, autoClose: false })) {
        this.checkStop();
        hash.update(chunk as Buffer);
        await this.write(chunk as Buffer);
        written += (chunk as Buffer).length;
      }
    }
    if (written !== size) throw new Error(`${path} shrank from ${size} to ${written} bytes while it was being backed up`);
    await this.pad(size);
    return { path, size, sha256: hash.digest('hex') };
  }

  /** Adds `data` as `path`. */
  async addBuffer(path: string, data: Buffer): Promise<ArchivedFile> {
    await this.header(path, data.length);
    await this.write(data);
    await this.pad(data.length);
    return { path, size: data.length, sha256: sha256Hex(data) };
  }

  /** Writes the end of the archive (two empty blocks), syncs and closes the file. */
  async finish(): Promise<void> {
    await this.write(Buffer.alloc(2 * BLOCK));
    await this.handle.sync();
    await this.handle.close();
  }

  /** Closes the file without ending the archive (after a failure). */
  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  private async header(path: string, size: number): Promise<void> {
    const header = new Header({ path, mode: 0o600, uid: 0, gid: 0, size, mtime: this.mtime, type: 'File' });
    if (header.encode()) await this.write(new Pax({ path, size, mtime: this.mtime }).encode());
    await this.write(header.block!);
  }

  private async pad(size: number): Promise<void> {
    const rest = size % BLOCK;
    if (rest) await this.write(Buffer.alloc(BLOCK - rest));
  }

  private async write(data: Buffer): Promise<void> {
    let offset = 0;
    while (offset < data.length) offset += (await this.handle.write(data, offset, data.length - offset)).bytesWritten;
  }
}

/** Where an entry's content goes: a new file (mode 0600, folders 0700), or memory (at most `maxBytes`). */
export type EntryTarget = { file: string } | { memory: number };

/** What reading an archive found: every file with its size and SHA-256, and the entries kept in memory. */
export interface ArchiveContent {
  files: Map<string, ArchivedFile>;
  kept: Map<string, Buffer>;
}

/**
 * Reads the tar file, handing each regular file's content to where `place(path, size)` says
 * (which throws to refuse an entry), hashing it on the way. Throws ArchiveDamaged when the file
 * is not a complete tar file, holds anything but regular files, or names a path twice; any
 * error of `place` or of writing (a full disk) as it is.
 */
export async function readArchive(file: string, place: (path: string, size: number) => EntryTarget, checkStop: () => void = () => undefined): Promise<ArchiveContent> {
  const content: ArchiveContent = { files: new Map(), kept: new Map() };
  const parser = new Parser({ strict: true });
  const writes: Promise<void>[] = [];
  const seen = new Set<string>();
  const source = createReadStream(file, { highWaterMark: CHUNK });
  const done = new Promise<void>((resolve, reject) => {
    const fail = (error: unknown) => {
      source.destroy();
      reject(error);
    };
    parser.on('error', (error: Error & { tarCode?: string }) => {
      // abort() emits the error it was given (tagged TAR_ABORT): ours, or a failed write's.
      fail(error.tarCode === 'TAR_ABORT' ? error : new ArchiveDamaged(tarProblem(error), { cause: error }));
    });
    source.on('error', fail);
    parser.on('end', resolve);
  });
  parser.on('entry', (entry: ReadEntry) => {
    try {
      checkStop();
      if (entry.type !== 'File' && entry.type !== 'OldFile') throw new ArchiveDamaged(`it holds ${entry.path}, which is not a regular file (${entry.type})`);
      if (seen.has(entry.path)) throw new ArchiveDamaged(`it holds ${entry.path} twice`);
      seen.add(entry.path);
      const target = place(entry.path, entry.size);
      const written = consume(entry, target, content);
      // A failed write (a full disk) stops the reading; the error is the one thrown.
      written.catch((error: Error) => parser.abort(error));
      writes.push(written);
    } catch (error) {
      entry.resume();
      parser.abort(error as Error);
    }
  });
  source.pipe(parser as unknown as NodeJS.WritableStream);
  await done;
  await Promise.all(writes);
  return content;
}

/**
 * Hashes the entry's content into its target and records it in `content`. A file's entry stays
 * paused until the file is open; its data then flows with the file's backpressure.
 */
function consume(entry: ReadEntry, target: EntryTarget, content: ArchiveContent): Promise<void> {
  const hash = createHash('sha256');
  const path = entry.path;
  const record = (size: number) => content.files.set(path, { path, size, sha256: hash.digest('hex') });
  if ('memory' in target) {
    if (entry.size > target.memory) throw new ArchiveDamaged(`its ${path} has ${entry.size} bytes, more than the ${target.memory} it may have`);
    const chunks: Buffer[] = [];
    return new Promise((resolve) => {
      entry.on('end', () => {
        const data = Buffer.concat(chunks);
        content.kept.set(path, data);
        record(data.length);
        resolve();
      });
      entry.on('data', (chunk: Buffer) => (hash.update(chunk), chunks.push(chunk)));
    });
  }
  entry.pause();
  return (async () => {
    await mkdir(dirname(target.file), { recursive: true, mode: 0o700 });
    const out = createWriteStream(target.file, { flags: 'wx', mode: 0o600 });
    let size = 0;
    await new Promise<void>((resolve, reject) => {
      out.on('error', reject);
      out.on('close', resolve);
      entry.on('end', () => out.end());
      entry.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
        if (!out.write(chunk)) {
          entry.pause();
          out.once('drain', () => entry.resume());
        }
      });
    });
    record(size);
  })();
}

/** node-tar's complaint as the second half of a sentence. */
function tarProblem(error: Error & { code?: string }): string {
  const message = error.message.replace(/^TAR_[A-Z_]+: /, '');
  if (/^Truncated input/.test(message)) return `it ends too early, so it is incomplete (${message})`;
  return `it is not a scanhub backup, not even a tar file (${message})`;
}

/** The SHA-256 of the bytes, in hex. */
export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
