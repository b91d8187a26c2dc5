import type { Command } from 'commander';
import { reprovision } from '../../client/provisioning.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { connect } from '../session.js';
import { showPreparation } from './preparation.js';

/** `scanhub gateways reprovision <gateway>`. */
export function registerReprovisionCommand(gateways: Command): void {
  gateways
    .command('reprovision <gateway>')
    .description('a new key, certificate and single-use token (24 h) for a replaced or reset device, same gateway id (by id or name)')
    .option('--qr', 'print the token as a QR code even when stdout is not a terminal')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const preparation = await reprovision(session, gatewayId);
      await showPreparation(
        session,
        preparation,
        options.qr,
        (url) => `Gateway ${gatewayId} is re-provisioned: the device sends the token to ${url} within 24 hours; its previous certificate works until then.`,
      );
    });
}
