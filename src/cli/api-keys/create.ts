import type { Command } from 'commander';
import { createApiKey } from '../../client/api-keys.js';
import { whoAmI } from '../../client/auth.js';
import { expiresAt } from '../flags.js';
import { examples } from '../help.js';
import { CliError, Exit, confirmAction, formatTime, success } from '../io.js';
import { connect } from '../session.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A key expires after this unless `--no-expiry` (DESIGN.md "CLI conventions": secure defaults). */
const DEFAULT_EXPIRY = '90d';

interface CreateOptions {
  name: string;
  permission?: string[];
  expires?: string;
  /** commander's `--no-expiry`: false when given. */
  expiry: boolean;
  yes?: boolean;
}

/** `scanhub api-keys create`: the key is printed once. */
export function registerCreateCommand(apiKeys: Command): void {
  apiKeys
    .command('create')
    .description('create an API key and print it, once (only its hash is kept)')
    .requiredOption('--name <name>', "a name unique among the customer's keys, e.g. the pipeline")
    .option('--permission <permission>', 'a permission of the key, repeatable: give only what the key needs (default: all of yours)', collect)
    .option('--expires <when>', `when the key expires: a duration from now (90d, 12h) or a time (2027-01-31) (default: ${DEFAULT_EXPIRY})`)
    .option('--no-expiry', 'a key that never expires (revoke it by hand)')
    .option('--yes', 'create without showing the permissions and asking first (on a terminal)')
    .addHelpText('after', examples(['scanhub api-keys create --name ci --permission event.read', 'scanhub api-keys create --name nightly-export --permission event.read --expires 30d']))
    .action(async (options: CreateOptions, command: Command) => {
      if (!options.expiry && options.expires !== undefined) throw new CliError('--expires and --no-expiry exclude each other: choose one', Exit.USAGE);
      const expires = options.expiry ? expiresAt(options.expires ?? DEFAULT_EXPIRY, Date.now()) : undefined;
      const session = await connect(command);
      const { io } = session;
      // On a terminal the person sees what the key could do before it exists; a script has chosen already.
      if (io.interactive && !options.yes) {
        const permissions = options.permission ?? (await whoAmI(session)).permissions;
        io.err(
          `The key "${options.name}" would hold ${permissions.join(', ')}${options.permission ? '' : ' (all of yours: narrow them with --permission)'}; ` +
            `${expires === undefined ? 'it would never expire' : `it would expire ${formatTime(io, expires)}`}.`,
        );
        await confirmAction(io, 'Create it?', false);
      }
      const created = await createApiKey(session, {
        name: options.name,
        ...(options.permission ? { permissions: options.permission } : {}),
        ...(expires !== undefined ? { expires_at: expires } : {}),
      });
      if (io.json) io.out(JSON.stringify(created, null, 2));
      else io.out(created.key);
      const expiry = created.expires_at === null ? 'does not expire' : `expires ${formatTime(io, created.expires_at)}`;
      success(
        io,
        `Created API key ${created.name} (${created.id}) with ${created.permissions.join(', ')}; it ${expiry}. ` +
          'This is the only time the key is shown: keep it as a secret (SCANHUB_TOKEN) of your pipeline.',
      );
    });
}
