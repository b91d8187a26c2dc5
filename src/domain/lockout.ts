/**
 * Per-e-mail lockout (DESIGN.md "Trust", "Brute force"): after LOGIN_LOCKOUT.refusals refused
 * log-ins of one e-mail address within LOGIN_LOCKOUT.windowMs, the next log-in of that address is
 * answered 429 until the oldest of those refusals leaves the window. Plain functions, no I/O.
 */
export const LOGIN_LOCKOUT = {
  /** Refused log-ins an address may have within the window; the next attempt is refused with 429. */
  refusals: 10,
  /** The sliding window: 15 minutes. */
  windowMs: 15 * 60_000,
} as const;

/** The key refusals are counted under: the address trimmed and lower-cased, as log-ins compare it. */
export function lockoutKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Milliseconds until the address may try again, or 0 when it may try now. `refusals` are the
 * times of its refusals within the window (any order).
 */
export function lockedForMs(
  refusals: readonly number[],
  now: number,
  limits: { refusals: number; windowMs: number } = LOGIN_LOCKOUT,
): number {
  const counted = refusals.filter((at) => at > now - limits.windowMs).sort((x, y) => x - y);
  if (counted.length < limits.refusals) return 0;
  // One attempt is let through again once only `refusals - 1` remain in the window: when the
  // refusal `refusals` places from the newest leaves it.
  const leaving = counted[counted.length - limits.refusals]!;
  return leaving + limits.windowMs - now;
}

/** Seconds for `Retry-After`: rounded up, at least 1. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
