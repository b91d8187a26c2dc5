import type { Command } from 'commander';
import { newMasterKey } from '../deployment.js';
import { examples } from '../help.js';

/** `scanhub operator master-key`: a new master key on stdout. */
export function registerMasterKeyCommand(operator: Command): void {
  operator
    .command('master-key')
    .addHelpText('after', examples(['scanhub operator master-key > /etc/scanhub/master.key']))
    .description('print a new master key (base64 of 32 random bytes) for SCANHUB_MASTER_KEY or --master-key-file')
    .action(() => {
      process.stdout.write(`${newMasterKey()}\n`);
    });
}
