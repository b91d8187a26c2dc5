import type { Command } from 'commander';
import { listUsers } from '../../client/users.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { userColumns } from './output.js';
import { examples } from '../help.js';

/** `scanhub users list`. */
export function registerListCommand(users: Command): void {
  users
    .command('list')
    .addHelpText('after', examples(['scanhub users list', 'scanhub users list --json']))
    .description('list the users')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listUsers(session), userColumns(session.io));
    });
}
