import type { Command } from 'commander';
import { examples } from '../help.js';
import { cancelCommand } from '../../client/commands.js';
import { printObject, success } from '../io.js';
import { connect } from '../session.js';
import { commandColumns } from './output.js';

/** `scanhub commands cancel <id>`: a QUEUED command is not sent from now on. */
export function registerCancelCommand(commands: Command): void {
  commands
    .command('cancel <id>')
    .description('cancel a command that is still QUEUED (one the gateway has is no longer canceled)')
    .addHelpText('after', examples(['scanhub commands cancel 0b8e4c1e-5d7f-4a51-9f0e-3c1a2b4d5e6f']))
    .action(async (id: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const canceled = await cancelCommand(session, id);
      printObject(session.io, canceled, commandColumns(session.io, new Map()));
      if (!session.io.json) success(session.io, `Canceled command ${canceled.command_id}: it is not sent to the gateway.`);
    });
}
