import { ago, dateTime } from '../../lib/time';

/** When the gateway's last message arrived, as "5 min ago" with the exact time on hover; "never" for none. */
export function LastSeen({ at, now }: { at: number | null; now: number }) {
  if (at === null) return <span class="muted">never</span>;
  return (
    <time dateTime={new Date(at).toISOString()} title={dateTime(at)}>
      {ago(at, now)}
    </time>
  );
}
