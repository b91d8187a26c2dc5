import type { Command } from 'commander';
import { deleteUser } from '../../client/users.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';

/** `scanhub users delete <user-id>`. */
export function registerDeleteCommand(users: Command): void {
  users
    .command('delete <user-id>')
    .description('delete a user')
    .option('--yes', 'do not ask for confirmation')
    .action(async (userId: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      await confirmAction(session.io, `Delete user ${userId}?`, options.yes);
      await deleteUser(session, userId);
      success(session.io, `Deleted user ${userId}.`);
    });
}
