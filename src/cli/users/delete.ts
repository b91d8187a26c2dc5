import type { Command } from 'commander';
import { deleteUser } from '../../client/users.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';
import { userOf } from './ref.js';

/** `scanhub users delete <user>`. */
export function registerDeleteCommand(users: Command): void {
  users
    .command('delete <user>')
    .description('delete a user (by e-mail or id)')
    .option('--yes', 'do not ask for confirmation (required when not interactive)')
    .addHelpText('after', '\nExample:\n  scanhub users delete ada@example.com --yes')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const user = await userOf(session, ref);
      await confirmAction(session.io, `Delete user ${user.email}?`, options.yes);
      await deleteUser(session, user.id);
      success(session.io, `Deleted user ${user.email}.`);
    });
}
