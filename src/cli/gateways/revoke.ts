import type { Command } from 'commander';
import { revokeCertificate } from '../../client/certificates.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { printObject, success } from '../io.js';
import { connect } from '../session.js';
import { certificateFields } from './certificate.js';

/** `scanhub gateways revoke <gateway>`. */
export function registerRevokeCommand(gateways: Command): void {
  gateways
    .command('revoke <gateway>')
    .description('revoke the gateway’s certificate (by id or name): its connection is closed and every later one refused')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const certificate = await revokeCertificate(session, gatewayId);
      printObject(session.io, certificate, certificateFields(session.io));
      success(
        session.io,
        `Revoked certificate ${certificate.serial} of gateway ${gatewayId}: the device is disconnected and cannot connect again; \`scanhub gateways reprovision ${gatewayId}\` gives it a new one.`,
      );
    });
}
