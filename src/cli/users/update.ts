import { Option, type Command } from 'commander';
import { updateUser, type UserChanges } from '../../client/users.js';
import { ROLES } from '../../domain/permissions.js';
import { CliError, Exit, printObject, success } from '../io.js';
import { connect } from '../session.js';
import { userFields } from './output.js';
import { userOf } from './ref.js';

interface UpdateOptions {
  role?: string[];
  firstName?: string;
  lastName?: string;
  language?: string;
}

/** `scanhub users update <user>`: roles, names, language (PATCH /{c}/users/{id}). */
export function registerUpdateCommand(users: Command): void {
  users
    .command('update <user>')
    .description("change a user's roles, names or language (by e-mail or id)")
    .addOption(new Option('--role <role...>', 'the roles the user has from now on (repeatable)').choices([...ROLES]))
    .option('--first-name <name>', 'new first name')
    .option('--last-name <name>', 'new last name')
    .option('--language <tag>', 'new language (BCP 47, e.g. de)')
    .addHelpText('after', '\nExamples:\n  scanhub users update ada@example.com --role ADMIN_ROLE\n  scanhub users update ada@example.com --first-name Ada --last-name Lovelace')
    .action(async (ref: string, options: UpdateOptions, command: Command) => {
      const changes: UserChanges = {
        ...(options.role ? { roles: options.role } : {}),
        ...(options.firstName !== undefined ? { first_name: options.firstName } : {}),
        ...(options.lastName !== undefined ? { last_name: options.lastName } : {}),
        ...(options.language !== undefined ? { language: options.language } : {}),
      };
      if (Object.keys(changes).length === 0) throw new CliError('nothing to change: give --role, --first-name, --last-name or --language', Exit.USAGE);
      const session = await connect(command);
      const user = await userOf(session, ref);
      const updated = await updateUser(session, user.id, changes);
      printObject(session.io, updated, userFields(session.io));
      success(session.io, `Updated user ${updated.email}.`);
    });
}
