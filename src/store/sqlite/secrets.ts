import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AuditEntry } from '../../domain/audit.js';
import type { SecretName, SecretRepository } from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import type { Db } from './open.js';

/**
 * The secrets of a SQLite deployment: files under the data directory, mode 0600. A missing one is
 * written to a temporary file and published with a hard link, which never replaces: of two processes
 * starting together one publishes, both read its value, nobody reads a half-written file. A
 * replacement is renamed over the file inside a write transaction of `db`, which orders replacements
 * across processes and writes their audit entries.
 */
export class FileSecrets implements SecretRepository {
  constructor(
    private readonly dataDir: string,
    private readonly db?: Db,
  ) {}

  async get(name: SecretName): Promise<string | undefined> {
    return readIfExists(join(this.dataDir, name));
  }

  async getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string> {
    const file = join(this.dataDir, name);
    const stored = readIfExists(file);
    if (stored !== undefined) return stored;
    const temp = writeTemporary(file, await create());
    try {
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temp);
    }
    return readFileSync(file, 'utf8');
  }

  async replace(name: SecretName, change: (current: string | undefined) => string, audit?: (customerIds: string[]) => AuditEntry[]): Promise<string> {
    const db = this.db;
    if (!db) throw new Error(`the secret ${JSON.stringify(name)} cannot be replaced without its database`);
    const file = join(this.dataDir, name);
    return db
      .transaction(() => {
        const value = change(readIfExists(file));
        const customerIds = db.prepare('SELECT id FROM customers ORDER BY id').pluck().all() as string[];
        for (const entry of audit?.(customerIds) ?? []) insertAuditEntry(db, entry);
        const temp = writeTemporary(file, value);
        // Last: a failure before it rolls the entries back; rename replaces the file whole.
        try {
          renameSync(temp, file);
        } catch (error) {
          unlinkSync(temp);
          throw error;
        }
        return value;
      })
      .immediate();
  }
}

/** Writes the value to a new temporary file beside `file` (mode 0600), to be published under its name; its path. */
function writeTemporary(file: string, value: string): string {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, value, { mode: 0o600, flag: 'wx' });
  return temp;
}

/** The file's text, or undefined when it does not exist. */
export function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
