import type { Command } from 'commander';
import { registerGetCommand } from './get.js';
import { registerSetCommand } from './set.js';
import { examples } from '../help.js';

/** `scanhub retention get|set`: how long the customer's events are kept (administrators). */
export function registerRetentionCommands(program: Command): void {
  const retention = program
    .command('retention')
    .description('how long the customer\'s events are kept before they are deleted (administrators)')
    .addHelpText('after', examples(['scanhub retention get', 'scanhub retention set --events-days 90'], 'Exit codes: 0 ok, 1 error, 2 usage, 4 not logged in or not an administrator.'));
  registerGetCommand(retention);
  registerSetCommand(retention);
}
