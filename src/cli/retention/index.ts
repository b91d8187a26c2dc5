import type { Command } from 'commander';
import { MAX_RETENTION_DAYS, type RetentionRecord } from '../domain/retention.js';
import { connect } from './connect.js';
import { CliError, Exit, formatTime, printObject, success, type Column, type Io } from './io.js';

const fields = (io: Io): Column<RetentionRecord>[] => [
  { header: 'EVENTS KEPT', value: (r) => kept(r.events_days) },
  { header: 'LAST DELETION', value: (r) => (r.last_deletion ? formatTime(io, r.last_deletion.finished) : 'never') },
  { header: 'DELETED', value: (r) => r.last_deletion?.deleted },
  { header: 'OLDER THAN', value: (r) => formatTime(io, r.last_deletion?.cutoff) },
  { header: 'LONGEST BATCH', value: (r) => (r.last_deletion ? `${r.last_deletion.longest_batch_ms} ms` : '') },
];

const kept = (days: number | null) => (days === null ? 'for ever' : `${days} day${days === 1 ? '' : 's'}`);

/** `--events-days`: a whole number of days within the API's range. */
function eventsDays(text: string): number {
  const days = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(days >= 1 && days <= MAX_RETENTION_DAYS)) {
    throw new CliError(`--events-days: "${text}" is not a whole number of days from 1 to ${MAX_RETENTION_DAYS} (use --forever to keep events for ever)`, Exit.USAGE);
  }
  return days;
}

/** `scanhub retention get|set`: how long the customer's events are kept (administrators). */
export function registerRetentionCommands(program: Command): void {
  const retention = program
    .command('retention')
    .description('how long the customer\'s events are kept before they are deleted (administrators)')
    .addHelpText('after', '\nExit codes: 0 ok, 1 error, 2 usage, 4 not logged in or not an administrator.');

  retention
    .command('get')
    .description('show how long events are kept and the last deletion')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await session.client.get<RetentionRecord>(`${session.base}/retention`), fields(session.io));
    });

  retention
    .command('set')
    .description('keep events N days (older ones are deleted, in small batches, within minutes) or for ever')
    .option('--events-days <days>', `keep events this many days, 1..${MAX_RETENTION_DAYS}`)
    .option('--forever', 'keep events for ever (the default of a new customer)')
    .action(async (options: { eventsDays?: string; forever?: boolean }, command: Command) => {
      // Refused before connecting: the usage is wrong whoever is logged in.
      if ((options.eventsDays === undefined) === !options.forever) {
        throw new CliError('retention set needs exactly one of --events-days N or --forever', Exit.USAGE);
      }
      const days = options.forever ? null : eventsDays(options.eventsDays!);
      const session = await connect(command);
      const stored = await session.client.put<RetentionRecord>(`${session.base}/retention`, { events_days: days });
      if (session.io.json) session.io.out(JSON.stringify(stored, null, 2));
      success(
        session.io,
        days === null
          ? `Events of ${session.customer} are now kept for ever.`
          : `Events of ${session.customer} are now kept ${kept(days)}: older ones are deleted in small batches, starting now (\`scanhub retention get\` shows the last deletion).`,
      );
    });
}
