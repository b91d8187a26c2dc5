/**
 * Moments and ranges as a user types them on the command line: ISO 8601 ("2025-06-01",
 * "2025-06-01T08:00:00Z"), milliseconds since the epoch, or a duration before now ("2h", "7d",
 * "1h30m"). A date-time without a zone is local time, as in JavaScript.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;

/** Milliseconds of a duration like `90s`, `15m`, `2h`, `7d`, `1w` or `1h30m`; throws naming the text. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!DURATION.test(trimmed)) throw new Error(`"${text}" is not a duration: use e.g. 90s, 15m, 2h, 7d, 1w or 1h30m`);
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return total;
}

/** Milliseconds since the epoch of an ISO 8601 time, a millisecond count, or a duration before `now`. */
export function parseMoment(text: string, now: number): number {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed)) return Number(trimmed);
  if (DURATION.test(trimmed)) return now - parseDuration(trimmed);
  if (/^\d{4}-\d{2}-\d{2}/.test(trimmed)) {
    const millis = Date.parse(trimmed);
    if (!Number.isNaN(millis)) return millis;
  }
  throw new Error(`"${text}" is not a time: use ISO 8601 (2025-06-01T08:00:00Z), milliseconds since the epoch, or a duration before now (2h, 7d)`);
}

export interface RangeOptions {
  from?: string;
  to?: string;
  since?: string;
}

/**
 * `--from/--to` or `--since` as a half-open range [start_time, end_time). Without any: the last
 * `defaultSpan`. `--to` alone ends there; `--from` alone runs until now.
 */
export function resolveTimeRange(options: RangeOptions, now: number, defaultSpan = 86_400_000): { start_time: number; end_time: number } {
  if (options.since !== undefined && (options.from !== undefined || options.to !== undefined)) {
    throw new Error('give either --since or --from/--to, not both');
  }
  if (options.since !== undefined) return { start_time: now - parseDuration(options.since), end_time: now };
  const end_time = options.to !== undefined ? parseMoment(options.to, now) : now;
  const start_time = options.from !== undefined ? parseMoment(options.from, now) : end_time - defaultSpan;
  if (end_time < start_time) throw new Error(`--to (${new Date(end_time).toISOString()}) is before --from (${new Date(start_time).toISOString()})`);
  return { start_time, end_time };
}
