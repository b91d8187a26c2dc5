/** `YYYY-MM-DDTHH:mm` in the reader's time zone: the value of an `<input type="datetime-local">`. */
export function toLocalInput(at: number): string {
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Milliseconds of a datetime-local value (read as local time), or undefined when it is empty or not a time. */
export function fromLocalInput(value: string): number | undefined {
  if (!value) return undefined;
  const at = new Date(value).getTime();
  return Number.isNaN(at) ? undefined : at;
}
