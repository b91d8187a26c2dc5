import { Option, type Command } from 'commander';
import { addDeploymentOptions } from '../deployment.js';
import { registerAssetCommands } from './assets.js';
import { registerBackupCommand } from './backup.js';
import { registerCaCommand } from './ca.js';
import { registerCustomerCommands } from './customers.js';
import { registerDeadLetterCommands } from './dead-letters.js';
import { registerFeatureCommands } from './features.js';
import { registerMasterKeyCommand } from './master-key.js';
import { registerMigrateCommand } from './migrate.js';
import { registerRestoreCommand } from './restore.js';
import { registerSigningKeyCommand } from './signing-key.js';
import { registerOperatorUserCommands } from './users.js';
import { examples } from '../help.js';

/** `scanhub operator ...`: administration of the deployment's data directory or database, not through the API. */
export function registerOperatorCommands(program: Command): void {
  const operator = program
    .command('operator')
    .description('administer the deployment: its data directory, or its PostgreSQL database with --database (works while `serve` runs)')
    .addHelpText('after', examples(['scanhub operator --data-dir /var/lib/scanhub users reset-password admin@localhost']))
    .addOption(new Option('--data-dir <dir>', 'data directory').env('SCANHUB_DATA_DIR').default('./scanhub-data'));
  addDeploymentOptions(operator);
  registerMasterKeyCommand(operator);
  registerCustomerCommands(operator);
  registerOperatorUserCommands(operator);
  registerFeatureCommands(operator);
  registerAssetCommands(operator);
  registerDeadLetterCommands(operator);
  registerCaCommand(operator);
  registerMigrateCommand(operator);
  registerSigningKeyCommand(operator);
  registerBackupCommand(operator);
  registerRestoreCommand(operator);
}
