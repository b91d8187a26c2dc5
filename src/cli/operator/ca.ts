import type { Command } from 'commander';
import { sha256Fingerprint } from '../../pki/tls-pair.js';
import { CliError } from '../io.js';
import { withOperatorStore } from './store.js';
import { examples } from '../help.js';

/** `scanhub operator ca`: the deployment CA's certificate for clients to trust (`--ca-cert`), and its fingerprint to compare. */
export function registerCaCommand(operator: Command): void {
  operator
    .command('ca')
    .addHelpText('after', examples(['scanhub operator --data-dir /var/lib/scanhub ca > scanhub-ca.pem']))
    .description("print the deployment CA's certificate (PEM, stdout) and its SHA-256 fingerprint (stderr): clients trust it with --ca-cert")
    .action(async (_options: unknown, command: Command) => {
      await withOperatorStore(command, async (store) => {
        const certPem = await store.secrets.get('pki/ca.crt');
        if (certPem === undefined) throw new CliError('this deployment has no CA yet: start `scanhub serve` once to create it');
        process.stdout.write(certPem.endsWith('\n') ? certPem : `${certPem}\n`);
        process.stderr.write(`SHA-256 fingerprint: ${sha256Fingerprint(certPem)}\n`);
      });
    });
}
