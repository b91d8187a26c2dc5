import type { Command } from 'commander';
import { looksLikeApiKey } from '../../auth/api-keys.js';
import { currentApiKey } from '../../client/api-keys.js';
import { whoAmI, type Me } from '../../client/auth.js';
import { formatTime, printObject, type Io } from '../io.js';
import { claimsOf, connect } from '../session.js';
import { examples } from '../help.js';

/** When an IdToken expires, from its own `exp` (it may come from the environment, not the profile). */
function tokenExpiry(io: Io, token: string): string {
  const exp = claimsOf(token)?.exp;
  return exp === undefined ? '' : formatTime(io, exp * 1000);
}

/** `scanhub whoami`: the user the token (or API key) belongs to. */
export function registerWhoamiCommand(program: Command): void {
  program
    .command('whoami')
    .addHelpText('after', examples(['scanhub whoami']))
    .description('show the user the token (or API key) belongs to')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      const me = await whoAmI(session);
      const token = session.client.token ?? '';
      const key = looksLikeApiKey(token) ? await currentApiKey(session.client) : undefined;
      printObject(session.io, me, [
        { header: 'email', value: (u) => u.email },
        { header: 'id', value: (u) => u.id },
        { header: 'customer', value: () => session.customer },
        { header: 'roles', value: (u) => u.roles.join(',') },
        ...(key
          ? [
              { header: 'api key', value: () => `${key.name} (${key.id})` },
              { header: 'permissions', value: (u: Me) => u.permissions.join(',') },
            ]
          : []),
        { header: 'url', value: () => session.client.baseUrl },
        { header: key ? 'key expires' : 'token expires', value: () => (key ? formatTime(session.io, key.expires_at) || 'never' : tokenExpiry(session.io, token)) },
      ]);
    });
}
