import type { Command } from 'commander';
import { registerExportCommand } from './export.js';
import { registerListCommand } from './list.js';
import { registerTailCommand } from './tail.js';

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
  registerListCommand(events);
  registerExportCommand(events);
  registerTailCommand(events);
}
