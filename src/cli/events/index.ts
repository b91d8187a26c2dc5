import type { Command } from 'commander';
import { registerExportCommand } from './export.js';
import { registerListCommand } from './list.js';
import { examples } from '../help.js';
import { registerTailCommand } from './tail.js';

/** `scanhub events list|export|tail`. */
export function registerEventCommands(program: Command): void {
  const events = program
    .command('events')
    .description('events of the customer: list, export as CSV, follow new ones')
    .addHelpText(
      'after',
      examples(
        ['scanhub events list --since 2h', 'scanhub events export --since 7d -o last-week.csv', 'scanhub events tail'],
        'Times (--since, --until): how long ago (30m, 2h, 7d), ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z; without an\n' +
          'offset it is local time), epoch milliseconds, or now. Ranges include their start and exclude their end.',
      ),
    );
  registerListCommand(events);
  registerExportCommand(events);
  registerTailCommand(events);
}
