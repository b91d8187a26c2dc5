import type { Command } from 'commander';
import { printObject } from '../io.js';
import { connect } from '../session.js';
import { userFields } from './output.js';
import { userOf } from './ref.js';

/** `scanhub users get <user>`. */
export function registerGetCommand(users: Command): void {
  users
    .command('get <user>')
    .description('show one user (by e-mail or id)')
    .addHelpText('after', '\nExample:\n  scanhub users get ada@example.com')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await userOf(session, ref), userFields(session.io));
    });
}
