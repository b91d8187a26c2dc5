import type { Command } from 'commander';
import { registerCreateCommand } from './create.js';
import { registerDeleteCommand } from './delete.js';
import { registerGetCommand } from './get.js';
import { registerInviteCommand, registerResetPasswordCommand } from './invite.js';
import { registerListCommand } from './list.js';
import { registerUpdateCommand } from './update.js';
import { examples } from '../help.js';

/** `scanhub users list|get|create|update|delete|invite|reset-password`; a user is named by e-mail or id. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').addHelpText('after', examples(['scanhub users list', 'scanhub users invite ada@example.com'])).description('users of the customer');
  registerListCommand(users);
  registerGetCommand(users);
  registerCreateCommand(users);
  registerUpdateCommand(users);
  registerDeleteCommand(users);
  registerInviteCommand(users);
  registerResetPasswordCommand(users);
}
