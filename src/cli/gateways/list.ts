import type { Command } from 'commander';
import { listGateways } from '../../client/gateways.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { gatewayColumns } from './output.js';

/** `scanhub gateways list`. */
export function registerListCommand(gateways: Command): void {
  gateways
    .command('list')
    .description('list the gateways')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listGateways(session), gatewayColumns(session.io));
    });
}
