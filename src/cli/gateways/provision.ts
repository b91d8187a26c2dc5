import type { Command } from 'commander';
import { prepareProvisioning } from '../../client/provisioning.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { connect } from '../session.js';
import { showPreparation } from './preparation.js';

/** `scanhub gateways provision <gateway>`. */
export function registerProvisionCommand(gateways: Command): void {
  gateways
    .command('provision <gateway>')
    .description('issue the gateway certificate and a single-use token (24 h) for the device (by id or name); once per gateway')
    .option('--qr', 'print the token as a QR code even when stdout is not a terminal')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const preparation = await prepareProvisioning(session, gatewayId);
      await showPreparation(session, preparation, options.qr, (url) => `Gateway ${gatewayId} is ready: the device sends the token to ${url} within 24 hours.`);
    });
}
