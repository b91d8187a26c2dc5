import { createPrivateKey } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** A private key a test knows, named for the failure message. */
export interface KnownKey {
  name: string;
  keyPem: string;
}

/**
 * What of a private key could show in stored bytes, each named: its secret numbers (EC `d`; RSA
 * `d`, `p`, `q`) raw, as hex text (how PostgreSQL prints bytea) and as base64 in each of the three
 * alignments, and every line of its PEM body but the first (which is the same for every key of a type).
 */
function traces(key: KnownKey): { what: string; bytes: Buffer }[] {
  const jwk = createPrivateKey(key.keyPem).export({ format: 'jwk' }) as Record<string, string | undefined>;
  const found: { what: string; bytes: Buffer }[] = [];
  for (const part of ['d', 'p', 'q']) {
    if (!jwk[part]) continue;
    const secret = Buffer.from(jwk[part]!, 'base64url').subarray(0, 24);
    found.push({ what: `${part} (raw)`, bytes: secret }, { what: `${part} (hex)`, bytes: Buffer.from(secret.toString('hex')) });
    for (let shift = 0; shift < 3; shift++) {
      // The middle of the base64 of the bytes from `shift` on does not depend on what came before.
      found.push({ what: `${part} (base64, +${shift})`, bytes: Buffer.from(secret.subarray(shift).toString('base64').slice(4, 24)) });
    }
  }
  const lines = key.keyPem.split('\n').filter((line) => /^[A-Za-z0-9+/=]{16,}$/.test(line));
  lines.slice(1).forEach((line, i) => found.push({ what: `PEM line ${i + 2}`, bytes: Buffer.from(line) }));
  return found.map(({ what, bytes }) => ({ what: `${key.name}: ${what}`, bytes }));
}

/** Which traces of the keys `haystack` holds, and "PRIVATE KEY" when it holds that text: [] when none. */
export function keyTracesIn(haystack: Buffer, keys: KnownKey[]): string[] {
  const found = haystack.includes('PRIVATE KEY') ? ['PRIVATE KEY'] : [];
  for (const key of keys) for (const trace of traces(key)) if (haystack.includes(trace.bytes)) found.push(trace.what);
  return found;
}

/** The files under `dir` (relative paths, sorted) whose bytes hold "PRIVATE KEY". */
export function filesHoldingPrivateKeys(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (readFileSync(path).includes('PRIVATE KEY')) found.push(relative(dir, path));
    }
  };
  walk(dir);
  return found.sort();
}
