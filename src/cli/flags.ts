import { InvalidArgumentError, type Command } from 'commander';
import type { EventRange } from '../client/events.js';
import { DEFAULT_RANGE_MS } from '../domain/event-listing.js';
import { parseDuration, parseTimeInput } from '../domain/time-input.js';
import { CliError, Exit } from './io.js';

/**
 * The flags several commands share: times and ranges (each a duration back from now, an ISO 8601
 * date or date-time, or epoch milliseconds: docs/events.md "CLI"), durations and limits.
 */

/** The range flags of `events list` and `events export`. */
export interface RangeOptions {
  since?: string;
  from?: string;
  to?: string;
}

/** Adds `--since`, `--from` and `--to` of the event commands. */
export function addEventRangeOptions(command: Command): Command {
  return command
    .option('--since <duration>', 'events of the last DURATION, e.g. 30m, 2h, 7d')
    .option('--from <time>', 'start of the range, included (default: a day before --to)')
    .option('--to <time>', 'end of the range, excluded (default: now)');
}

/** commander parser for durations (`--interval 2s`). */
export function durationArgument(text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** commander parser for `--limit`: 1..500. */
export function limitArgument(text: string): number {
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new InvalidArgumentError(`"${text}" is not a number from 1 to 500.`);
  return limit;
}

/** The value of a flag as `parse` reads it; a refusal names the flag (exit 2). */
function flagValue(flag: string, text: string, parse: (text: string) => number): number {
  try {
    return parse(text);
  } catch (error) {
    throw new CliError(`${flag}: ${(error as Error).message}`, Exit.USAGE, { cause: error });
  }
}

/** A point in time given to `flag`: how long ago, ISO 8601, epoch milliseconds or now. */
export function timeFlag(flag: string, text: string, now: number): number {
  return flagValue(flag, text, (value) => parseTimeInput(value, now));
}

/** Refuses a range that starts after it ends. */
export function checkRange(start: number | undefined, end: number | undefined): void {
  if (start !== undefined && end !== undefined && start > end) {
    throw new CliError(`the range starts (${new Date(start).toISOString()}) after it ends (${new Date(end).toISOString()})`, Exit.USAGE);
  }
}

/**
 * The query of `--since` or `--from/--to`, in milliseconds; bounds not given are left to the
 * server (the last 24 hours) unless `explicit`, which fills them in from the local clock.
 */
export function rangeQuery(options: RangeOptions, now: number, explicit = false): EventRange {
  if (options.since !== undefined && (options.from !== undefined || options.to !== undefined)) {
    throw new CliError('--since cannot be combined with --from or --to: use one or the other', Exit.USAGE);
  }
  let start =
    options.since !== undefined
      ? now - flagValue('--since', options.since, parseDuration)
      : options.from !== undefined
        ? timeFlag('--from', options.from, now)
        : undefined;
  let end = options.to !== undefined ? timeFlag('--to', options.to, now) : undefined;
  if (explicit) {
    end ??= now;
    start ??= Math.max(0, end - DEFAULT_RANGE_MS);
  }
  checkRange(start, end);
  return { start_time_millis: start, end_time_millis: end };
}

/** `--expires`: a duration from now (`90d`, `12h`) or a point in time (ISO 8601, epoch milliseconds). */
export function expiresAt(text: string, now: number): number {
  try {
    return now + parseDuration(text);
  } catch {
    // Not a duration: a point in time.
  }
  try {
    return parseTimeInput(text, now);
  } catch (error) {
    throw new CliError(`--expires: "${text}" is neither a duration from now (90d, 12h) nor a time (2027-01-31, ISO 8601)`, Exit.USAGE, { cause: error });
  }
}
