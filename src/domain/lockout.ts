/** Log-in lockout (docs/users.md "Lockout"): this many refusals within the sliding window lock the next log-in (429). */
export const LOGIN_LOCKOUT = {
  refusals: 10,
  windowMs: 15 * 60_000,
} as const;

/**
 * The key refusals are counted under: the user an address found (every spelling that finds the
 * user counts alike), else the address as the stores compare it (normalisedEmail), so that an
 * unknown address is locked like a known one and a 429 tells nothing about who has an account.
 */
export function lockoutKey(found: { userId: string } | { email: string }): string {
  return 'userId' in found ? `user:${found.userId}` : `email:${normalisedEmail(found.email)}`;
}

/**
 * An e-mail address as both stores compare them (unique per deployment, case-insensitively):
 * trimmed, ASCII letters lower-cased, every other character as it is. SQLite's NOCASE folds ASCII
 * only, and PostgreSQL's lower() in the C collation too; Unicode case folding (U+0130 to "i")
 * would make addresses equal in one store and not in the other.
 */
export function normalisedEmail(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
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
