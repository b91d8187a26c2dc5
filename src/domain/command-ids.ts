import { randomUUID } from 'node:crypto';

/** The time digits of the last id's `now`. */
let last = { now: Number.NaN, prefix: '' };

/**
 * A UUID of version 7 (RFC 9562 section 5.7): the milliseconds since the epoch in its first 48
 * bits, random bits after. The ids of commands and of their audit entries are keys of unique
 * indexes written hundreds of times a second: a random key lands on a page of its own in each
 * commit (written to the WAL again, and read back into the cache once the index outgrows it),
 * where keys that grow with time share the last pages. Still a UUID to every reader.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  // The 74 random bits of a version 4 UUID (crypto's buffered entropy: no system call per id)
  // after its version digit, the variant bits already 10 as version 7 wants them. The time's
  // digits are kept for the next id: a write makes an id per command at one `now`.
  if (now !== last.now) last = { now, prefix: timePrefix(now) };
  return last.prefix + randomUUID().slice(15);
}

function timePrefix(now: number): string {
  const time = (Math.max(0, Math.floor(now)) % 2 ** 48).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7`;
}
