import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { MIN_PASSWORD_LENGTH, hashPassword } from '../../auth/passwords.js';
import { operatorAuditEntry } from '../../domain/audit.js';
import { customerIdProblem, isCustomerId, isEmailAddress } from '../../domain/identifiers.js';
import { CliError, Exit, createIo, promptNewSecret, readStdin, success } from '../io.js';
import { globalsOf } from '../session.js';
import { withOperatorStore } from './store.js';
import { examples } from '../help.js';

function customerId(value: string): string {
  if (!isCustomerId(value)) throw new CliError(customerIdProblem(value), Exit.USAGE);
  return value;
}

/** `scanhub operator customers add`: a customer with its first administrator. */
export function registerCustomerCommands(operator: Command): void {
  const customers = operator.command('customers').addHelpText('after', examples(['scanhub operator customers add acme --admin-email admin@acme.example'])).description('customers of this deployment');
  customers
    .command('add <customer_id>')
    .addHelpText('after', examples(['scanhub operator customers add acme --admin-email admin@acme.example']))
    .description('create a customer with its first administrator')
    .requiredOption('--admin-email <email>', "the administrator's e-mail address")
    .option('--password-stdin', 'read the administrator password from standard input (else prompted)')
    .action(async (id: string, options: { adminEmail: string; passwordStdin?: boolean }, command: Command) => {
      customerId(id);
      if (!isEmailAddress(options.adminEmail)) {
        throw new CliError(`"${options.adminEmail}" is not an e-mail address`, Exit.USAGE);
      }
      const io = createIo(globalsOf(command));
      // Typed at a prompt: checked there and asked twice (promptNewSecret); from stdin: checked below.
      const password = options.passwordStdin ? await readStdin() : await promptNewSecret(io, 'administrator password', MIN_PASSWORD_LENGTH, '--password-stdin');
      if (password.length < MIN_PASSWORD_LENGTH) {
        throw new CliError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, Exit.USAGE);
      }
      const passwordHash = await hashPassword(password);
      await withOperatorStore(command, async (store) => {
        const now = Date.now();
        const userId = randomUUID();
        const admin = { id: userId, customer_id: id, email: options.adminEmail, roles: ['ADMIN_ROLE'], password_hash: passwordHash, created: now };
        const audit = operatorAuditEntry(randomUUID(), id, now, 'user.created', { type: 'user', id: userId }, { email: options.adminEmail, roles: admin.roles });
        const outcome = await store.customers.createWithAdmin(id, admin, now, audit);
        if (outcome === 'email-taken') throw new CliError(`a user with the e-mail address ${options.adminEmail} already exists`);
        if (outcome === 'customer-exists') throw new CliError(`customer "${id}" already exists`);
        if (io.json) io.out(JSON.stringify({ customer_id: id, admin: { id: userId, email: options.adminEmail } }, null, 2));
        success(io, `Created customer "${id}" with administrator ${options.adminEmail}.`);
      });
    });
}
