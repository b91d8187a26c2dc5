import { useId } from 'preact/hooks';

/** `ms` as a `datetime-local` value (`2026-11-27T09:30`) in the reader's time zone. */
export function localDateTime(ms: number): string {
  const date = new Date(ms);
  return new Date(ms - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A `datetime-local` value as milliseconds since the epoch, or undefined when empty. */
export function epochOf(value: string): number | undefined {
  return value ? new Date(value).getTime() : undefined;
}

interface Props {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
}

/** A labelled date and time in the reader's time zone, to the minute. */
export function DateTimeField({ label, value, onValue, hint }: Props) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="datetime-local" value={value} onInput={(event) => onValue(event.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
