import { Option, type Command } from 'commander';
import { createUser } from '../../client/users.js';
import { isEmailAddress } from '../../domain/identifiers.js';
import { CliError, Exit, printObject, shellWord, success } from '../io.js';
import { connect } from '../session.js';
import { userFields } from './output.js';

/** `scanhub users create`. */
export function registerCreateCommand(users: Command): void {
  users
    .command('create')
    .description('create a user (then `scanhub users invite` so they can set a password)')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .addOption(new Option('--role <role>', 'role').choices(['USER_ROLE', 'ADMIN_ROLE']).default('USER_ROLE'))
    .addHelpText('after', '\nExample:\n  scanhub users create --email ada@example.com --first-name Ada --last-name Lovelace')
    .action(async (options: { email: string; firstName: string; lastName: string; role: string }, command: Command) => {
      // Checked here: the API's refusal names a body field, not the flag the user typed.
      if (!isEmailAddress(options.email)) throw new CliError(`--email: "${options.email}" is not an e-mail address such as ada@example.com`, Exit.USAGE);
      const session = await connect(command);
      const user = await createUser(session, {
        first_name: options.firstName,
        last_name: options.lastName,
        role: options.role,
        email: options.email,
      });
      printObject(session.io, user, userFields(session.io));
      success(session.io, `Created user ${user.email}; invite them with \`scanhub users invite ${shellWord(user.email)}\`.`);
    });
}
