import type { Command } from 'commander';
import { listApiKeys, revokeApiKey } from '../../client/api-keys.js';
import { CliError, confirmAction, success } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

/** `scanhub api-keys revoke <key>`, by id or name. */
export function registerRevokeCommand(apiKeys: Command): void {
  apiKeys
    .command('revoke <key>')
    .addHelpText('after', examples(['scanhub api-keys revoke ci --yes']))
    .description('revoke an API key, by id or name: it is refused from the next request on')
    .option('--yes', 'do not ask for confirmation (required when not interactive)')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const keys = await listApiKeys(session);
      const key = keys.find((k) => k.id === ref) ?? keys.find((k) => k.name === ref);
      if (!key) throw new CliError(`no API key with the id or name "${ref}" (revoked keys are not listed): \`scanhub api-keys list\` shows them`);
      await confirmAction(session.io, `Revoke API key ${key.name}? Whatever uses it is refused from then on.`, options.yes);
      await revokeApiKey(session, key.id);
      if (session.io.json) session.io.out(JSON.stringify(key, null, 2));
      success(session.io, `Revoked API key ${key.name} (${key.id}): it is refused from now on.`);
    });
}
