import { InvalidArgumentError } from 'commander';
import { csvRecord, type CellMode } from '../domain/csv.js';
import { DEFAULT_RANGE_MS } from '../domain/event-listing.js';
import { parseDuration, parseTimeInput } from '../domain/time-input.js';
import { EVENT_COLUMNS } from '../domain/events.js';
import { CliError, Exit, formatTime, printList, type Column, type Io } from './io.js';

/** An event as the API returns it (spec 2.2). */
export type ApiEvent = { id: string; created: number; type: string } & Partial<Record<(typeof EVENT_COLUMNS)[number], string | number>>;

/** A list response of the events call (spec 2.3). */
export interface EventPage {
  items: ApiEvent[];
  links: { next?: string };
  metadata: { description: string; size: number; filters: { name: string; value: unknown }[] };
}

/** The range flags shared by list, export and tail. */
export interface RangeOptions {
  since?: string;
  from?: string;
  to?: string;
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

/**
 * The query of `--since` or `--from/--to`, in milliseconds; bounds not given are left to the
 * server (the last 24 hours) unless `explicit`, which fills them in from the local clock.
 */
export function rangeQuery(options: RangeOptions, now: number, explicit = false): { start_time_millis?: number; end_time_millis?: number } {
  if (options.since !== undefined && (options.from !== undefined || options.to !== undefined)) {
    throw new CliError('--since cannot be combined with --from or --to: use one or the other', Exit.USAGE);
  }
  const parse = (flag: string, text: string) => {
    try {
      return flag === '--since' ? now - parseDuration(text) : parseTimeInput(text, now);
    } catch (error) {
      throw new CliError(`${flag}: ${(error as Error).message}`, Exit.USAGE, { cause: error });
    }
  };
  let start = options.since !== undefined ? parse('--since', options.since) : options.from !== undefined ? parse('--from', options.from) : undefined;
  let end = options.to !== undefined ? parse('--to', options.to) : undefined;
  if (explicit) {
    end ??= now;
    start ??= Math.max(0, end - DEFAULT_RANGE_MS);
  }
  if (start !== undefined && end !== undefined && start > end) {
    throw new CliError(`the range starts (${new Date(start).toISOString()}) after it ends (${new Date(end).toISOString()})`, Exit.USAGE);
  }
  return { start_time_millis: start, end_time_millis: end };
}

/** The columns of event tables and tab-separated rows. */
export const eventColumns = (io: Io): Column<ApiEvent>[] => [
  { header: 'CREATED', value: (e) => formatTime(io, e.created) },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'GATEWAY', value: (e) => e.gateway_id },
  { header: 'DEVICE', value: (e) => e.device_id },
  { header: 'SCAN CODE', value: (e) => e.scan_code },
  { header: 'ID', value: (e) => e.id },
];

/**
 * Prints events page by page as they arrive: `--json` one array (the API items), `--csv` the
 * export format (text cells as `cells` says), a pipe tab-separated rows, a TTY one table at the end.
 */
export class EventPrinter {
  private count = 0;
  private readonly table: ApiEvent[] = [];
  /** The last JSON item printed so far: its comma depends on whether another follows. */
  private held: string | undefined;

  constructor(
    private readonly io: Io,
    private readonly format: 'json' | 'csv' | 'text',
    private readonly cells: CellMode = 'safe',
  ) {
    if (format === 'csv') io.out(csvRecord(EVENT_COLUMNS));
  }

  page(events: readonly ApiEvent[]): void {
    if (events.length === 0) return;
    if (this.format === 'json') {
      // The same text as JSON.stringify(allEvents, null, 2), written a page at a time.
      const lines = this.held === undefined ? ['['] : [this.held + ','];
      const items = events.map((e) => JSON.stringify(e, null, 2).replace(/^/gm, '  '));
      this.held = items.pop();
      this.io.out([...lines, ...items.map((item) => item + ',')].join('\n'));
    } else if (this.format === 'csv') {
      this.io.out(events.map((e) => csvRecord(EVENT_COLUMNS.map((c) => e[c]), this.cells)).join(''));
    } else if (this.io.tty) {
      this.table.push(...events);
    } else {
      printList(this.io, [...events], eventColumns(this.io));
    }
    this.count += events.length;
  }

  /** Closes the JSON array or prints the table; returns how many events were printed. */
  end(): number {
    if (this.format === 'json') this.io.out(this.held === undefined ? '[]' : `${this.held}\n]`);
    if (this.format === 'text' && this.io.tty) printList(this.io, this.table, eventColumns(this.io));
    return this.count;
  }
}
