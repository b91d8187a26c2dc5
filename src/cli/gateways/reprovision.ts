import type { Command } from 'commander';
import { getCertificate } from '../../client/certificates.js';
import { reprovision } from '../../client/provisioning.js';
import { gatewayOf, labelOf } from '../gateway-refs.js';
import { connect } from '../session.js';
import { showPreparation } from './preparation.js';

/** `scanhub gateways reprovision <gateway>`. */
export function registerReprovisionCommand(gateways: Command): void {
  gateways
    .command('reprovision <gateway>')
    .description('a new key, certificate and single-use token (24 h) for a replaced or reset device, same gateway id (by id or name)')
    .option('--qr', 'print the provisioning code as a QR code even when stdout is not a terminal')
    .addHelpText('after', '\nExample:\n  scanhub gateways reprovision dock-1')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gateway = await gatewayOf(session, ref);
      // Read before: the message says whether the previous certificate still works meanwhile (a revoked one does not).
      const previous = await getCertificate(session, gateway.id).catch(() => undefined);
      const preparation = await reprovision(session, gateway.id);
      const meanwhile = previous?.status === 'revoked' ? 'until then it cannot connect: its certificate was revoked' : 'its previous certificate works until then';
      await showPreparation(
        session,
        preparation,
        options.qr,
        (url) => `Gateway ${labelOf(gateway)} is re-provisioned: the device sends the token to ${url} within 24 hours; ${meanwhile}.`,
      );
    });
}
