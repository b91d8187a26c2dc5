import type { Command } from 'commander';
import { registerBulkCreateCommand } from './bulk-create.js';
import { registerCertificateCommand } from './certificate.js';
import { registerCreateCommand } from './create.js';
import { registerDeleteCommand } from './delete.js';
import { registerGetCommand } from './get.js';
import { registerListCommand } from './list.js';
import { registerPackageCommand } from './package.js';
import { registerProvisionCommand } from './provision.js';
import { registerReprovisionCommand } from './reprovision.js';
import { registerRevokeCommand } from './revoke.js';
import { registerUpdateCommand } from './update.js';
import { examples } from '../help.js';

/** `scanhub gateways list|get|create|update|delete|bulk-create|provision|package|certificate|revoke|reprovision`. */
export function registerGatewayCommands(program: Command): void {
  const gateways = program.command('gateways').addHelpText('after', examples(['scanhub gateways create --name dock-1 --usecase inbound --station dock-1', 'scanhub gateways provision dock-1'])).description('gateways (connectivity devices) and their provisioning');
  registerListCommand(gateways);
  registerGetCommand(gateways);
  registerCreateCommand(gateways);
  registerUpdateCommand(gateways);
  registerDeleteCommand(gateways);
  registerBulkCreateCommand(gateways);
  registerProvisionCommand(gateways);
  registerPackageCommand(gateways);
  registerCertificateCommand(gateways);
  registerRevokeCommand(gateways);
  registerReprovisionCommand(gateways);
}
