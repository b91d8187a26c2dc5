import type { Command } from 'commander';
import { nextPage } from '../../client/api.js';
import { listEvents, type EventPage } from '../../client/events.js';
import { addRangeOptions, limitArgument, rangeQuery, type RangeOptions } from '../flags.js';
import { gatewayIdOf, gatewayNames } from '../gateway-refs.js';
import { CliError, Exit } from '../io.js';
import { connect } from '../session.js';
import { EventPrinter } from './printer.js';
import { examples } from '../help.js';

interface ListOptions extends RangeOptions {
  gateway?: string;
  limit?: number;
  all?: boolean;
  csv?: boolean;
  rawCells?: boolean;
}

/** `scanhub events list`: newest first, a page or every page of the range. */
export function registerListCommand(events: Command): void {
  addRangeOptions(events.command('list').description('list events, newest first (default: the last 24 hours)'))
    .addHelpText('after', examples(['scanhub events list --since 2h', 'scanhub events list --since 2026-11-27 --gateway dock-1 --csv']))
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
      const format = io.json ? 'json' : options.csv ? 'csv' : 'text';
      const names = format === 'text' ? await gatewayNames(session) : new Map<string, string>();
      const printer = new EventPrinter(io, format, options.rawCells ? 'raw' : 'safe', names);
      const max = options.limit ?? 500;

      let page = await listEvents(session, query);
      // A gateway's events come in one response; --limit then caps what is printed.
      const items = options.gateway && !options.all ? page.items.slice(0, max) : page.items;
      printer.page(items);
      let more = items.length < page.items.length || Boolean(page.links.next);
      while (options.all && page.links.next) {
        page = await nextPage<EventPage>(client, page.links.next);
        printer.page(page.items);
      }
      if (options.all) more = false;
      const count = printer.end();
      // An empty range: the printer's table said "No results." already.
      if (more) io.err(`Printed the newest ${count} events of the range; --all prints every one.`);
    });
}
