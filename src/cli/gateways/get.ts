import type { Command } from 'commander';
import { getGateway } from '../../client/gateways.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { printObject } from '../io.js';
import { connect } from '../session.js';
import { gatewayFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub gateways get <gateway>`. */
export function registerGetCommand(gateways: Command): void {
  gateways
    .command('get <gateway>')
    .addHelpText('after', examples(['scanhub gateways get dock-1']))
    .description('show one gateway (by id, thing name or name), with its version for --if-match')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const { gateway, version } = await getGateway(session, gatewayId);
      printObject(session.io, gateway, gatewayFields(session.io, version));
    });
}
