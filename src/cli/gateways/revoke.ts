import type { Command } from 'commander';
import { revokeCertificate } from '../../client/certificates.js';
import { gatewayOf, labelOf } from '../gateway-refs.js';
import { confirmAction, printObject, shellWord, success } from '../io.js';
import { connect } from '../session.js';
import { certificateFields } from './certificate.js';

/** `scanhub gateways revoke <gateway>`. */
export function registerRevokeCommand(gateways: Command): void {
  gateways
    .command('revoke <gateway>')
    .description('revoke the gateway’s certificate (by id or name): its connection is closed and every later one refused')
    .option('--yes', 'do not ask for confirmation (required when not interactive)')
    .addHelpText('after', '\nExample:\n  scanhub gateways revoke dock-1 --yes')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const gateway = await gatewayOf(session, ref);
      await confirmAction(session.io, `Revoke the certificate of gateway ${labelOf(gateway)}? Its device is disconnected until it is reprovisioned.`, options.yes);
      const certificate = await revokeCertificate(session, gateway.id);
      printObject(session.io, certificate, certificateFields(session.io));
      success(
        session.io,
        `Revoked certificate ${certificate.serial} of gateway ${labelOf(gateway)}: the device is disconnected and cannot connect again; \`scanhub gateways reprovision ${shellWord(ref)}\` gives it a new one.`,
      );
    });
}
