import type { Command } from 'commander';
import { examples } from '../help.js';
import { registerCancelCommand } from './cancel.js';
import { registerListCommand } from './list.js';
import { registerSendCommand } from './send.js';

/** `scanhub commands send|list|cancel`: commands to gateways and their scanners (docs/commands.md). */
export function registerCommandCommands(program: Command): void {
  const commands = program
    .command('commands')
    .description('commands to gateways and their scanners: queued until the gateway takes them over MQTT')
    .addHelpText('after', examples(['scanhub commands send dock-1 --name feedback --param sequence=OK --wait'], 'Status: QUEUED -> DELIVERED (the gateway has it) -> SUCCEEDED or FAILED (its answer); EXPIRED; CANCELED.'));
  registerSendCommand(commands);
  registerListCommand(commands);
  registerCancelCommand(commands);
}
