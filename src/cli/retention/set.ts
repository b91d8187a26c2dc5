import type { Command } from 'commander';
import { setRetention } from '../../client/retention.js';
import { MAX_RETENTION_DAYS } from '../../domain/retention.js';
import { CliError, Exit, success } from '../io.js';
import { connect } from '../session.js';
import { kept } from './output.js';
import { examples } from '../help.js';

/** `--events-days`: a whole number of days within the API's range. */
function eventsDays(text: string): number {
  const days = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(days >= 1 && days <= MAX_RETENTION_DAYS)) {
    throw new CliError(`--events-days: "${text}" is not a whole number of days from 1 to ${MAX_RETENTION_DAYS} (use --forever to keep events for ever)`, Exit.USAGE);
  }
  return days;
}

/** `scanhub retention set --events-days N | --forever`. */
export function registerSetCommand(retention: Command): void {
  retention
    .command('set')
    .addHelpText('after', examples(['scanhub retention set --events-days 90', 'scanhub retention set --forever']))
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
      const stored = await setRetention(session, days);
      if (session.io.json) session.io.out(JSON.stringify(stored, null, 2));
      success(
        session.io,
        days === null
          ? `Events of ${session.customer} are now kept for ever.`
          : `Events of ${session.customer} are now kept ${kept(days)}: older ones are deleted in small batches, starting now (\`scanhub retention get\` shows the last deletion).`,
      );
    });
}
