const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How long ago `at` was, in words (`just now`, `5 min ago`, `3 h ago`, `2 days ago`), else its date. */
export function ago(at: number, now: number = Date.now()): string {
  const elapsed = now - at;
  if (elapsed < MINUTE) return 'just now';
  if (elapsed < HOUR) return `${Math.floor(elapsed / MINUTE)} min ago`;
  if (elapsed < DAY) return `${Math.floor(elapsed / HOUR)} h ago`;
  if (elapsed < 30 * DAY) return `${Math.floor(elapsed / DAY)} day${elapsed < 2 * DAY ? '' : 's'} ago`;
  return new Date(at).toLocaleDateString();
}

/** A date and time in the reader's locale, to the second. */
export function dateTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
