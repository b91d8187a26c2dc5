import type { Command } from 'commander';
import { getCertificate, type GatewayCertificate } from '../../client/certificates.js';
import { gatewayIdOf } from '../gateway-refs.js';
import { formatTime, printObject, type Column, type Io } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

/** The fields of a gateway's certificate (`certificate`, `revoke`). */
export const certificateFields = (io: Io): Column<GatewayCertificate>[] => [
  { header: 'serial', value: (c) => c.serial },
  { header: 'status', value: (c) => c.status },
  { header: 'not_before', value: (c) => formatTime(io, c.not_before) },
  { header: 'not_after', value: (c) => formatTime(io, c.not_after) },
];

/** `scanhub gateways certificate <gateway>`. */
export function registerCertificateCommand(gateways: Command): void {
  gateways
    .command('certificate <gateway>')
    .addHelpText('after', examples(['scanhub gateways certificate dock-1']))
    .description('show the gateway’s current certificate (by id or name): serial, status (pending, active, revoked), validity')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      printObject(session.io, await getCertificate(session, gatewayId), certificateFields(session.io));
    });
}
