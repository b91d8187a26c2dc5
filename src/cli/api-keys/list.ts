import type { Command } from 'commander';
import { listApiKeys, type ApiKey } from '../../client/api-keys.js';
import { formatTime, printList, type Column, type Io } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

const columns = (io: Io): Column<ApiKey>[] => [
  { header: 'ID', value: (k) => k.id },
  { header: 'NAME', value: (k) => k.name },
  { header: 'PERMISSIONS', value: (k) => k.permissions.join(',') },
  { header: 'CREATED', value: (k) => formatTime(io, k.created) },
  { header: 'EXPIRES', value: (k) => formatTime(io, k.expires_at) || 'never' },
  { header: 'LAST USED', value: (k) => formatTime(io, k.last_used) || 'never' },
];

/** `scanhub api-keys list`. */
export function registerListCommand(apiKeys: Command): void {
  apiKeys
    .command('list')
    .addHelpText('after', examples(['scanhub api-keys list']))
    .description('list the API keys that are not revoked')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listApiKeys(session), columns(session.io));
    });
}
