/**
 * Times typed by people on the command line: ISO 8601 (`2024-05-01`, `2024-05-01T08:00`,
 * `2024-05-01T08:00:00Z`), milliseconds since the epoch, `now`, and relative forms that count
 * back from now (`30s`, `30m`, `2h`, `7d`, `2w`, also `1h30m`). Pure: `now` is passed in.
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const DURATION = /^(?:\d+(?:ms|[smhdw]))+$/;
const PART = /(\d+)(ms|[smhdw])/g;

/** A duration such as `2h`, `7d`, `1h30m` or `500ms` in milliseconds; throws RangeError quoting the text. */
export function parseDuration(text: string): number {
  const trimmed = text.trim().toLowerCase();
  if (!DURATION.test(trimmed)) {
    throw new RangeError(`"${text}" is not a duration: use a number and a unit, e.g. 30s, 30m, 2h, 7d or 2w`);
  }
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART)) total += Number(amount) * UNIT_MS[unit!]!;
  if (!Number.isSafeInteger(total)) throw new RangeError(`"${text}" is too long a duration`);
  return total;
}

// Date-only and date-time forms; a time without an offset is local time (as JavaScript reads it).
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A point in time in milliseconds since the epoch: ISO 8601, epoch milliseconds (10 digits or
 * more), `now`, or a duration meaning that long before `now` (`2h` = two hours ago).
 * A date without a time is local midnight. Throws RangeError quoting the text.
 */
export function parseTimeInput(text: string, now: number): number {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === 'now') return now;
  if (/^\d{10,}$/.test(trimmed)) {
    const millis = Number(trimmed);
    if (Number.isSafeInteger(millis)) return millis;
  }
  if (DURATION.test(trimmed.toLowerCase())) return now - parseDuration(trimmed);
  if ((ISO_DATE.test(trimmed) || ISO_DATE_TIME.test(trimmed)) && isCalendarDate(trimmed)) {
    const millis = ISO_DATE.test(trimmed) ? localMidnight(trimmed) : Date.parse(trimmed.replace(' ', 'T'));
    if (!Number.isNaN(millis)) return millis;
  }
  throw new RangeError(
    `"${text}" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d`,
  );
}

/** Whether the leading YYYY-MM-DD names a real day (JavaScript would read 2024-02-30 as March 1). */
function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function localMidnight(text: string): number {
  const [year, month, day] = text.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, day).getTime();
}
