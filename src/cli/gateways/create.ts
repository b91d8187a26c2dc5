import type { Command } from 'commander';
import { createGateway } from '../../client/gateways.js';
import { labelOf } from '../gateway-refs.js';
import { printObject, shellWord, success } from '../io.js';
import { connect } from '../session.js';
import { gatewayFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub gateways create`. */
export function registerCreateCommand(gateways: Command): void {
  gateways
    .command('create')
    .addHelpText('after', examples(['scanhub gateways create --name dock-1 --usecase inbound --station dock-1']))
    .description('create a gateway')
    .requiredOption('--name <name>', 'displayed name, unique within the customer')
    .requiredOption('--usecase <usecase>', 'use case')
    .requiredOption('--station <station>', 'station name')
    .action(async (options: { name: string; usecase: string; station: string }, command: Command) => {
      const session = await connect(command);
      const { gateway, version } = await createGateway(session, { name: options.name, usecase: options.usecase, station: options.station });
      printObject(session.io, gateway, gatewayFields(session.io, version));
      success(session.io, `Created gateway ${labelOf(gateway)}; provision it with \`scanhub gateways provision ${shellWord(gateway.name)}\`.`);
    });
}
