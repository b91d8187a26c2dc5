import { InvalidArgumentError } from 'commander';
import { durationArgument } from '../flags.js';

// commander parsers of the flags of `scanhub simulate`: each refuses a value out of its range.

/** A whole number from 1 to `max`. */
export function positiveInteger(max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`"${value}" is not a whole number from 1 to ${max}.`);
    return n;
  };
}

/** Events per second, per gateway. */
export function rate(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 10_000) throw new InvalidArgumentError(`"${value}" is not a rate above 0 and at most 10000 events per second.`);
  return n;
}

/** `--duration 5m`: a duration in the one grammar of the CLI (domain/time-input.ts), at most 24h. */
export function duration(value: string): number {
  const ms = durationArgument(value);
  if (ms <= 0 || ms > 24 * 3_600_000) throw new InvalidArgumentError(`"${value}" is not a duration above 0 and at most 24h.`);
  return ms;
}

/** `--backdate 3d`: a duration (domain/time-input.ts forms) of at most 366 days. */
export function backdate(value: string): number {
  const ms = durationArgument(value);
  if (ms > 366 * 86_400_000) throw new InvalidArgumentError(`"${value}" is more than 366d.`);
  return ms;
}
