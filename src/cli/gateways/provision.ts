import type { Command } from 'commander';
import { ApiError } from '../../client/api.js';
import { prepareProvisioning } from '../../client/provisioning.js';
import { gatewayOf, labelOf } from '../gateway-refs.js';
import { CliError, shellWord } from '../io.js';
import { connect } from '../session.js';
import { showPreparation } from './preparation.js';

/** `scanhub gateways provision <gateway>`. */
export function registerProvisionCommand(gateways: Command): void {
  gateways
    .command('provision <gateway>')
    .description('issue the gateway certificate and a single-use token (24 h) for the device (by id or name); once per gateway')
    .option('--qr', 'print the provisioning code as a QR code even when stdout is not a terminal')
    .addHelpText('after', '\nExamples:\n  scanhub gateways provision dock-1\n  scanhub gateways provision dock-1 --json > dock-1.json')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gateway = await gatewayOf(session, ref);
      const preparation = await prepareProvisioning(session, gateway.id).catch((error: unknown) => {
        // A gateway is prepared once (docs/gateways.md): the way on is reprovision, a state and not a permission (exit 1).
        if (error instanceof ApiError && error.status === 403 && error.details.includes('already prepared')) {
          throw new CliError(
            `gateway ${labelOf(gateway)} was prepared before: run \`scanhub gateways reprovision ${shellWord(ref)}\` to give its device a new certificate and token, or create a new gateway for another device`,
          );
        }
        throw error;
      });
      await showPreparation(session, preparation, options.qr, (url) => `Gateway ${labelOf(gateway)} is ready: the device sends the token to ${url} within 24 hours.`);
    });
}
