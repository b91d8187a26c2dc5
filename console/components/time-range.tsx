import { useId } from 'preact/hooks';

/** A range as the fields hold it: `datetime-local` values (`2024-05-01T08:30`), in the reader's time zone. */
export interface TimeRangeValue {
  from: string;
  to: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The `datetime-local` value of an instant, to the minute, in the reader's time zone. */
export function localInput(at: number): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The last `hours` up to the next whole minute (so that what arrived this minute is inside). */
export function lastHours(hours: number, now = Date.now()): TimeRangeValue {
  const end = Math.ceil((now + 1) / 60_000) * 60_000;
  return { from: localInput(end - hours * 3_600_000), to: localInput(end) };
}

/**
 * The range in epoch milliseconds, `start <= created < end`, or the sentence saying which field
 * to correct.
 */
export function rangeMillis(range: TimeRangeValue): { start: number; end: number } | { problem: string } {
  const start = range.from ? new Date(range.from).getTime() : NaN;
  const end = range.to ? new Date(range.to).getTime() : NaN;
  if (Number.isNaN(start)) return { problem: 'Enter a date and time in From.' };
  if (Number.isNaN(end)) return { problem: 'Enter a date and time in To.' };
  if (start > end) return { problem: 'From must not be later than To.' };
  return { start, end };
}

/** Two fields, `From` and `To` (DESIGN.md "Web console"): a half-open range, From included, To not. */
export function TimeRange({ value, onValue }: { value: TimeRangeValue; onValue: (value: TimeRangeValue) => void }) {
  const id = useId();
  return (
    <fieldset class="time-range">
      <legend class="visually-hidden">Time range</legend>
      <div class="field">
        <label for={`${id}-from`}>From</label>
        <input id={`${id}-from`} type="datetime-local" value={value.from} required onInput={(event) => onValue({ ...value, from: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={`${id}-to`}>To</label>
        <input id={`${id}-to`} type="datetime-local" value={value.to} required onInput={(event) => onValue({ ...value, to: event.currentTarget.value })} />
      </div>
    </fieldset>
  );
}
