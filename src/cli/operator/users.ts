import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { MIN_PASSWORD_LENGTH, generatePassword, hashPassword } from '../../auth/passwords.js';
import { operatorAuditEntry } from '../../domain/audit.js';
import { examples } from '../help.js';
import { CliError, Exit, createIo, readStdin, shellWord, success } from '../io.js';
import { globalsOf } from '../session.js';
import { withOperatorStore } from './store.js';

/**
 * `scanhub operator users reset-password <email>`: the way back in for a lost administrator
 * (docs/users.md "A lost password"). Local, on the data directory or database, like every
 * operator command: whoever may read those may take over any account anyway.
 */
export function registerOperatorUserCommands(operator: Command): void {
  const users = operator
    .command('users')
    .description('users of any customer, on the deployment itself (no log-in)')
    .addHelpText('after', examples(['scanhub operator users reset-password admin@localhost']));
  users
    .command('reset-password <email>')
    .description('set a new password for a user: generated and printed once, or read with --password-stdin; the user’s IdTokens stop working')
    .option('--password-stdin', `read the new password (at least ${MIN_PASSWORD_LENGTH} characters) from standard input instead of generating one`)
    .addHelpText('after', examples(['scanhub operator --data-dir /var/lib/scanhub users reset-password admin@localhost', 'printf %s "$NEW_PASSWORD" | scanhub operator users reset-password admin@localhost --password-stdin']))
    .action(async (email: string, options: { passwordStdin?: boolean }, command: Command) => {
      const io = createIo(globalsOf(command));
      const given = options.passwordStdin ? await readStdin() : undefined;
      if (given !== undefined && [...given].length < MIN_PASSWORD_LENGTH) {
        throw new CliError(`the password on standard input has ${[...given].length} characters; it needs at least ${MIN_PASSWORD_LENGTH}`, Exit.USAGE);
      }
      const password = given ?? generatePassword();
      await withOperatorStore(command, async (store) => {
        const user = await store.users.byEmail(email);
        if (!user) throw new CliError(`no user of this deployment has the e-mail address "${email}"`);
        const now = Date.now();
        const audit = operatorAuditEntry(randomUUID(), user.customer_id, now, 'user.password_reset', { type: 'user', id: user.id }, { email: user.email });
        await store.users.setPassword(user.id, await hashPassword(password), now, audit);
        if (io.json) io.out(JSON.stringify({ user_id: user.id, customer_id: user.customer_id, email: user.email, ...(given ? {} : { password }) }, null, 2));
        else if (!given) io.out(password);
        success(
          io,
          `Set a new password for ${user.email} (customer ${user.customer_id})${given ? '' : ', printed above once: store it now'}; ` +
            `their IdTokens no longer work. Log in with \`scanhub login --email ${shellWord(user.email)}\`.`,
        );
      });
    });
}
