import { Command } from 'commander';
import { gatewayIdOf } from './gateway-refs.js';
import { connect } from './connect.js';
import { EventPrinter, limitArgument, rangeQuery, type EventPage, type RangeOptions } from './event-output.js';
import { registerEventExportCommand } from './events-export.js';
import { registerEventTailCommand } from './events-tail.js';
import { CliError, Exit } from './io.js';

interface ListOptions extends RangeOptions {
  gateway?: string;
  limit?: number;
  all?: boolean;
  csv?: boolean;
  rawCells?: boolean;
}

/** `scanhub events list|export|tail`. */
export function registerEventCommands(program: Command): void {
  const events = program
    .command('events')
    .description('events of the customer: list, export as CSV, follow new ones')
    .addHelpText(
      'after',
      '\nTimes: ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z; without an offset it is local time), epoch milliseconds,\n' +
        'now, or how long ago (30m, 2h, 7d). Ranges include their start and exclude their end.',
    );

  events
    .command('list')
    .description('list events, newest first (default: the last 24 hours)')
    .option('--since <duration>', 'events of the last DURATION, e.g. 30m, 2h, 7d')
    .option('--from <time>', 'start of the range, included (default: a day before --to)')
    .option('--to <time>', 'end of the range, excluded (default: now)')
    .option('--gateway <gateway>', 'only events of this gateway (id or name)')
    .option('--limit <n>', 'print at most N events, 1..500 (default 500); with --all, events per request', limitArgument)
    .option('--all', 'print every event of the range, following the pages')
    .option('--csv', 'print CSV: a header and every field, as `events export` writes it')
    .option('--raw-cells', "with --csv: cells as stored, no leading ' before text that begins with =, +, -, @, tab or CR")
    .action(async (options: ListOptions, command: Command) => {
      const session = await connect(command);
      const { io, client } = session;
      if (options.csv && io.json) throw new CliError('--csv and --json exclude each other: choose one', Exit.USAGE);
      if (options.rawCells && !options.csv) throw new CliError('--raw-cells applies to --csv only: add --csv or leave it out', Exit.USAGE);
      const range = rangeQuery(options, Date.now());
      const gateway = options.gateway === undefined ? undefined : await gatewayIdOf(session, options.gateway);
      const query = { ...range, gateway_id: gateway, limit: options.limit };
      const printer = new EventPrinter(io, io.json ? 'json' : options.csv ? 'csv' : 'text', options.rawCells ? 'raw' : 'safe');
      const max = options.limit ?? 500;

      let page = await client.get<EventPage>(`${session.base}/events`, query);
      // A gateway's events come in one response; --limit then caps what is printed.
      const items = options.gateway && !options.all ? page.items.slice(0, max) : page.items;
      printer.page(items);
      let more = items.length < page.items.length || Boolean(page.links.next);
      while (options.all && page.links.next) {
        page = await client.get<EventPage>(page.links.next);
        printer.page(page.items);
      }
      if (options.all) more = false;
      const count = printer.end();
      if (more) io.err(`Printed the newest ${count} events of the range; --all prints every one.`);
      else if (count === 0 && !io.json && io.tty) io.err('No events in the range.');
    });

  registerEventExportCommand(events);
  registerEventTailCommand(events);
}
