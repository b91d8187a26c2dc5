import { InvalidArgumentError, Option, type Command } from 'commander';
import type { EventRange } from '../client/events.js';
import { DEFAULT_RANGE_MS } from '../domain/event-listing.js';
import { parseDuration, parseTimeInput } from '../domain/time-input.js';
import { CliError, Exit } from './io.js';

/**
 * The flags several commands share: times and ranges (each a duration back from now, an ISO 8601
 * date or date-time, or epoch milliseconds: docs/events.md "CLI"), durations and limits.
 */

/** The range flags of every ranged command: `--since`/`--until`, and the old `--from`/`--to` (hidden aliases). */
export interface RangeOptions {
  since?: string;
  until?: string;
  from?: string;
  to?: string;
}

const TIME_FORMS = 'how long ago (30m, 2h, 7d), a date or date-time (ISO 8601), or epoch milliseconds';

/**
 * Adds `--since` and `--until` (DESIGN: one range grammar on every command), and `--from`/`--to`
 * hidden, so scripts written for the older flags keep working.
 */
export function addRangeOptions(command: Command, defaultSince = 'a day before --until'): Command {
  return command
    .option('--since <time>', `start of the range, included: ${TIME_FORMS} (default: ${defaultSince})`)
    .option('--until <time>', 'end of the range, excluded, in the same forms (default: now)')
    .addOption(new Option('--from <time>', 'old name of --since').hideHelp())
    .addOption(new Option('--to <time>', 'old name of --until').hideHelp());
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

/** One bound given by its flag or by its old alias; both at once is a usage error. */
function bound(options: RangeOptions, flag: 'since' | 'until', alias: 'from' | 'to', now: number): number | undefined {
  if (options[flag] !== undefined && options[alias] !== undefined) {
    throw new CliError(`--${alias} is the old name of --${flag}: give one of them`, Exit.USAGE);
  }
  if (options[flag] !== undefined) return timeFlag(`--${flag}`, options[flag], now);
  return options[alias] === undefined ? undefined : timeFlag(`--${alias}`, options[alias], now);
}

/**
 * The query of `--since`/`--until`, in milliseconds; bounds not given are left to the server
 * (the last 24 hours) unless `explicit`, which fills them in from the local clock.
 */
export function rangeQuery(options: RangeOptions, now: number, explicit = false): EventRange {
  let start = bound(options, 'since', 'from', now);
  let end = bound(options, 'until', 'to', now);
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
