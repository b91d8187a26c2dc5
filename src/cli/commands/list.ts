import type { Command } from 'commander';
import { examples } from '../help.js';
import { listGatewayCommands } from '../../client/commands.js';
import { gatewayNames } from '../gateway-refs.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { commandColumns } from './output.js';

/** `scanhub commands list <gateway>`: the gateway's commands, newest first. */
export function registerListCommand(commands: Command): void {
  commands
    .command('list <gateway>')
    .description('list the commands of a gateway (by id or name), newest first')
    .addHelpText('after', examples(['scanhub commands list dock-1', 'scanhub commands list dock-1 --json']))
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const listed = await listGatewayCommands(session, gatewayId);
      const names = session.io.json || listed.length === 0 ? new Map<string, string>() : await gatewayNames(session);
      printList(session.io, listed, commandColumns(session.io, names));
    });
}
