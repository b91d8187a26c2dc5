import type { Command } from 'commander';
import { seg } from '../client/api.js';
import { connect, type Session } from './connect.js';
import { gatewayIdOf } from './gateway-refs.js';
import { showPreparation, type Preparation } from './preparation-output.js';
import { formatTime, printObject, success, type Column, type Io } from './io.js';

/** A gateway's current certificate as the API returns it (DESIGN.md "Trust"). */
export interface GatewayCertificate {
  serial: string;
  not_before: number;
  not_after: number;
  status: 'pending' | 'active' | 'revoked';
}

const fields = (io: Io): Column<GatewayCertificate>[] => [
  { header: 'serial', value: (c) => c.serial },
  { header: 'status', value: (c) => c.status },
  { header: 'not_before', value: (c) => formatTime(io, c.not_before) },
  { header: 'not_after', value: (c) => formatTime(io, c.not_after) },
];

/** The path of one of the gateway's certificate resources. */
const pathOf = (session: Session, gatewayId: string, resource: string) => `${session.base}/gateways/${seg(gatewayId)}/${resource}`;

/** `gateways certificate|revoke|reprovision`. */
export function registerCertificateCommands(gateways: Command): void {
  gateways
    .command('certificate <gateway>')
    .description('show the gateway’s current certificate (by id or name): serial, status (pending, active, revoked), validity')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      printObject(session.io, await session.client.get<GatewayCertificate>(pathOf(session, gatewayId, 'certificate')), fields(session.io));
    });

  gateways
    .command('revoke <gateway>')
    .description('revoke the gateway’s certificate (by id or name): its connection is closed and every later one refused')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const certificate = await session.client.post<GatewayCertificate>(pathOf(session, gatewayId, 'revoke-certificate'));
      printObject(session.io, certificate, fields(session.io));
      success(
        session.io,
        `Revoked certificate ${certificate.serial} of gateway ${gatewayId}: the device is disconnected and cannot connect again; \`scanhub gateways reprovision ${gatewayId}\` gives it a new one.`,
      );
    });

  gateways
    .command('reprovision <gateway>')
    .description('a new key, certificate and single-use token (24 h) for a replaced or reset device, same gateway id (by id or name)')
    .option('--qr', 'print the token as a QR code even when stdout is not a terminal')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const preparation = await session.client.post<Preparation>(pathOf(session, gatewayId, 'reprovision'));
      await showPreparation(
        session,
        preparation,
        options.qr,
        (url) => `Gateway ${gatewayId} is re-provisioned: the device sends the token to ${url} within 24 hours; its previous certificate works until then.`,
      );
    });
}
