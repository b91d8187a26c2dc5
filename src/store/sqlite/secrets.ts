import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SecretName, SecretRepository } from '../ports.js';

/**
 * The secrets of a SQLite deployment: files under the data directory (`pki/ca.key`,
 * `keys/idtoken.jwk`, ...), mode 0600, their text exactly as created. A missing one is written to
 * a temporary file and published with a hard link, which never replaces: of two processes that
 * start together only one publishes, both read its value, and nobody reads a half-written file.
 */
export class FileSecrets implements SecretRepository {
  constructor(private readonly dataDir: string) {}

  async get(name: SecretName): Promise<string | undefined> {
    return readIfExists(join(this.dataDir, name));
  }

  async getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string> {
    const file = join(this.dataDir, name);
    const stored = readIfExists(file);
    if (stored !== undefined) return stored;
    const value = await create();
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temp, value, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temp);
    }
    return readFileSync(file, 'utf8');
  }
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
