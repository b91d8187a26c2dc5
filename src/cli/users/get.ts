import type { Command } from 'commander';
import { getUser } from '../../client/users.js';
import { printObject } from '../io.js';
import { connect } from '../session.js';
import { userFields } from './output.js';

/** `scanhub users get <user-id>`. */
export function registerGetCommand(users: Command): void {
  users
    .command('get <user-id>')
    .description('show one user')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await getUser(session, userId), userFields(session.io));
    });
}
