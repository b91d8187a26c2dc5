import { randomFillSync } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562 section 5.7): the milliseconds since the epoch in its first 48
 * bits, random bits after. The ids of commands and of their audit entries are keys of unique
 * indexes written hundreds of times a second: a random key lands on a page of its own in each
 * commit (written to the WAL again, and read back into the cache once the index outgrows it),
 * where keys that grow with time share the last pages. Still a UUID to every reader.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  const bytes = randomFillSync(Buffer.alloc(16), 6, 10);
  bytes.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
