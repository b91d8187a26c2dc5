import type { Command } from 'commander';
import { deleteGateway } from '../../client/gateways.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';

/** `scanhub gateways delete <gateway>`. */
export function registerDeleteCommand(gateways: Command): void {
  gateways
    .command('delete <gateway>')
    .description('delete a gateway (by id or name): its certificate stops working')
    .option('--yes', 'do not ask for confirmation')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      await confirmAction(session.io, `Delete gateway ${gatewayId}? Its device can no longer connect.`, options.yes);
      await deleteGateway(session, gatewayId);
      success(session.io, `Deleted gateway ${gatewayId}.`);
    });
}
