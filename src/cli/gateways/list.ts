import type { Command } from 'commander';
import { listGateways } from '../../client/gateways.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { gatewayColumns } from './output.js';
import { examples } from '../help.js';

/** `scanhub gateways list`. */
export function registerListCommand(gateways: Command): void {
  gateways
    .command('list')
    .addHelpText('after', examples(['scanhub gateways list', 'scanhub gateways list --json']))
    .description('list the gateways')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listGateways(session), gatewayColumns(session.io));
    });
}
