import type { Command } from 'commander';
import { deleteGateway } from '../../client/gateways.js';
import { gatewayOf, labelOf } from '../gateway-refs.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';

/** `scanhub gateways delete <gateway>`. */
export function registerDeleteCommand(gateways: Command): void {
  gateways
    .command('delete <gateway>')
    .description('delete a gateway (by id or name): its certificate stops working')
    .option('--yes', 'do not ask for confirmation (required when not interactive)')
    .addHelpText('after', '\nExample:\n  scanhub gateways delete dock-1 --yes')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const gateway = await gatewayOf(session, ref);
      await confirmAction(session.io, `Delete gateway ${labelOf(gateway)}? Its device can no longer connect.`, options.yes);
      await deleteGateway(session, gateway.id);
      success(session.io, `Deleted gateway ${labelOf(gateway)}.`);
    });
}
