import type { Command } from 'commander';
import { updateGateway, type GatewayChanges } from '../../client/gateways.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { CliError, Exit, printObject, success } from '../io.js';
import { connect } from '../session.js';
import { gatewayFields } from './output.js';
import { examples } from '../help.js';

interface UpdateOptions extends GatewayChanges {
  ifMatch?: string;
}

/** `scanhub gateways update <gateway>`. */
export function registerUpdateCommand(gateways: Command): void {
  gateways
    .command('update <gateway>')
    .addHelpText('after', examples(['scanhub gateways update dock-1 --station dock-1a']))
    .description('change name, use case or station')
    .option('--name <name>', 'new displayed name')
    .option('--usecase <usecase>', 'new use case')
    .option('--station <station>', 'new station')
    .option('--if-match <version>', 'change only if the gateway is still at this version (from `gateways get`)')
    .action(async (ref: string, options: UpdateOptions, command: Command) => {
      const session = await connect(command);
      const changes: GatewayChanges = Object.fromEntries(
        (['name', 'usecase', 'station'] as const).filter((f) => options[f] !== undefined).map((f) => [f, options[f]]),
      );
      if (Object.keys(changes).length === 0) throw new CliError('nothing to change: pass --name, --usecase or --station', Exit.USAGE);
      const gatewayId = await gatewayIdOf(session, ref);
      const { gateway, version } = await updateGateway(session, gatewayId, changes, options.ifMatch);
      printObject(session.io, gateway, gatewayFields(session.io, version));
      success(session.io, `Updated gateway "${gateway.name}" (${gateway.id}), now at version ${version}.`);
    });
}
