import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SecretName, SecretRepository } from '../ports.js';

/**
 * The secrets of a SQLite deployment: files under the data directory (`pki/ca.key`,
 * `keys/idtoken.jwk`, ...), mode 0600, their text exactly as created. A missing one is written
 * with `wx`, so of two processes that start together only one writes, and both read its value.
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
    try {
      writeFileSync(file, value, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return readFileSync(file, 'utf8');
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
