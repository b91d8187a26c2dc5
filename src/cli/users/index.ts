import type { Command } from 'commander';
import { registerCreateCommand } from './create.js';
import { registerDeleteCommand } from './delete.js';
import { registerGetCommand } from './get.js';
import { registerInviteCommand } from './invite.js';
import { registerListCommand } from './list.js';

/** `scanhub users list|get|create|delete|invite`. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('users of the customer');
  registerListCommand(users);
  registerGetCommand(users);
  registerCreateCommand(users);
  registerDeleteCommand(users);
  registerInviteCommand(users);
}
