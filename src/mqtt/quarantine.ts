import { createHash } from 'node:crypto';

/** How many quarantined payloads are remembered (their SHA-256, by length): the newest win. */
const REMEMBERED = 1000;

/**
 * The payloads that crashed the writer thread alone, so that a copy of one (a device that keeps
 * sending the same message) is quarantined at once instead of killing the thread again. Checking
 * a message costs one Map lookup while nothing is quarantined, and hashes only a payload whose
 * length equals a quarantined one. Kept for the life of the process.
 */
export class QuarantinedPayloads {
  private readonly byLength = new Map<number, Set<string>>();
  private readonly order: { length: number; digest: string }[] = [];

  /** Remembers a quarantined payload. */
  add(payload: Uint8Array): void {
    const digest = sha256(payload);
    const same = this.byLength.get(payload.length) ?? new Set<string>();
    if (same.has(digest)) return;
    same.add(digest);
    this.byLength.set(payload.length, same);
    this.order.push({ length: payload.length, digest });
    if (this.order.length > REMEMBERED) this.forget(this.order.shift()!);
  }

  /** Whether the payload is a byte-for-byte copy of a quarantined one. */
  has(payload: Uint8Array): boolean {
    if (this.byLength.size === 0) return false;
    const same = this.byLength.get(payload.length);
    return same !== undefined && same.has(sha256(payload));
  }

  private forget({ length, digest }: { length: number; digest: string }): void {
    const same = this.byLength.get(length)!;
    same.delete(digest);
    if (same.size === 0) this.byLength.delete(length);
  }
}

const sha256 = (payload: Uint8Array) => createHash('sha256').update(payload).digest('base64');
