import { parseDuration, parseTimeInput } from './time-input.js';

// time-input.ts is a byte-identical copy of the events branch's parser, so the two merge cleanly.

export interface RangeOptions {
  from?: string;
  to?: string;
  since?: string;
}

/**
 * `--from/--to` or `--since` as a half-open range [start_time, end_time), times as
 * `parseTimeInput` reads them. Without any: the last `defaultSpan`. `--to` alone ends there;
 * `--from` alone runs until now.
 */
export function resolveTimeRange(options: RangeOptions, now: number, defaultSpan = 86_400_000): { start_time: number; end_time: number } {
  if (options.since !== undefined && (options.from !== undefined || options.to !== undefined)) {
    throw new Error('give either --since or --from/--to, not both');
  }
  if (options.since !== undefined) return { start_time: now - parseDuration(options.since), end_time: now };
  const end_time = options.to !== undefined ? parseTimeInput(options.to, now) : now;
  const start_time = options.from !== undefined ? parseTimeInput(options.from, now) : end_time - defaultSpan;
  if (end_time < start_time) throw new Error(`--to (${new Date(end_time).toISOString()}) is before --from (${new Date(start_time).toISOString()})`);
  return { start_time, end_time };
}
