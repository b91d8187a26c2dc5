import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Reads a secret file, creating it (mode 0600, `wx` so two processes never both write) when missing. */
export function loadOrCreateSecret(file: string, create: () => string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    writeFileSync(file, create(), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(file, 'utf8');
}

/** The HMAC key that signs download links, from `keys/links.key`. */
export function loadLinkKey(dataDir: string): Buffer {
  const dir = join(dataDir, 'keys');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hex = loadOrCreateSecret(join(dir, 'links.key'), () => randomBytes(32).toString('hex'));
  return Buffer.from(hex.trim(), 'hex');
}
