import type { Command } from 'commander';
import { createApiKey } from '../../client/api-keys.js';
import { expiresAt } from '../flags.js';
import { formatTime, success } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `scanhub api-keys create`: the key is printed once. */
export function registerCreateCommand(apiKeys: Command): void {
  apiKeys
    .command('create')
    .addHelpText('after', examples(['scanhub api-keys create --name ci --permission event.read', 'scanhub api-keys create --name nightly-export --permission event.read --expires 30d']))
    .description('create an API key and print it, once (only its hash is kept)')
    .requiredOption('--name <name>', 'a name unique among the customer\'s keys, e.g. the pipeline')
    .option('--permission <permission>', 'a permission of the key, repeatable (default: all of yours)', collect)
    .option('--expires <when>', 'when the key expires: a duration from now (90d, 12h) or a time (2027-01-31); default never')
    .action(async (options: { name: string; permission?: string[]; expires?: string }, command: Command) => {
      const session = await connect(command);
      const created = await createApiKey(session, {
        name: options.name,
        ...(options.permission ? { permissions: options.permission } : {}),
        ...(options.expires !== undefined ? { expires_at: expiresAt(options.expires, Date.now()) } : {}),
      });
      if (session.io.json) session.io.out(JSON.stringify(created, null, 2));
      else session.io.out(created.key);
      const expiry = created.expires_at === null ? 'does not expire' : `expires ${formatTime(session.io, created.expires_at)}`;
      success(
        session.io,
        `Created API key ${created.name} (${created.id}) with ${created.permissions.join(', ')}; it ${expiry}. ` +
          'This is the only time the key is shown: keep it as a secret (SCANHUB_TOKEN) of your pipeline.',
      );
    });
}
