import type { Command } from 'commander';
import { collectAll, seg } from '../client/api.js';
import { parseDuration, parseTimeInput } from '../domain/time-input.js';
import { connect } from './connect.js';
import { CliError, Exit, formatTime, printList, success, type Column, type Io } from './io.js';

/** An API key as the API lists it (DESIGN.md "Trust"); `key` only in the answer that created it. */
export interface ApiKey {
  id: string;
  name: string;
  key?: string;
  permissions: string[];
  created: number;
  expires_at: number | null;
  last_used: number | null;
}

const columns = (io: Io): Column<ApiKey>[] => [
  { header: 'ID', value: (k) => k.id },
  { header: 'NAME', value: (k) => k.name },
  { header: 'PERMISSIONS', value: (k) => k.permissions.join(',') },
  { header: 'CREATED', value: (k) => formatTime(io, k.created) },
  { header: 'EXPIRES', value: (k) => formatTime(io, k.expires_at) || 'never' },
  { header: 'LAST USED', value: (k) => formatTime(io, k.last_used) || 'never' },
];

/** `--expires`: a duration from now (`90d`, `12h`) or a point in time (ISO 8601, epoch milliseconds). */
function expiresAt(text: string, now: number): number {
  try {
    return now + parseDuration(text);
  } catch {
    // Not a duration: a point in time.
  }
  try {
    return parseTimeInput(text, now);
  } catch (error) {
    throw new CliError(`--expires: "${text}" is neither a duration from now (90d, 12h) nor a time (2027-01-31, ISO 8601)`, Exit.USAGE, { cause: error });
  }
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `scanhub api-keys create|list|revoke`. */
export function registerApiKeyCommands(program: Command): void {
  const apiKeys = program.command('api-keys').description('API keys for scripts and CI (use one as SCANHUB_TOKEN)');

  apiKeys
    .command('create')
    .description('create an API key and print it, once (only its hash is kept)')
    .requiredOption('--name <name>', 'a name unique among the customer\'s keys, e.g. the pipeline')
    .option('--permission <permission>', 'a permission of the key, repeatable (default: all of yours)', collect)
    .option('--expires <when>', 'when the key expires: a duration from now (90d, 12h) or a time (2027-01-31); default never')
    .action(async (options: { name: string; permission?: string[]; expires?: string }, command: Command) => {
      const session = await connect(command);
      const body = {
        name: options.name,
        ...(options.permission ? { permissions: options.permission } : {}),
        ...(options.expires !== undefined ? { expires_at: expiresAt(options.expires, Date.now()) } : {}),
      };
      const created = await session.client.post<ApiKey & { key: string }>(`${session.base}/api-keys`, body);
      if (session.io.json) session.io.out(JSON.stringify(created, null, 2));
      else session.io.out(created.key);
      const expiry = created.expires_at === null ? 'does not expire' : `expires ${formatTime(session.io, created.expires_at)}`;
      success(
        session.io,
        `Created API key ${created.name} (${created.id}) with ${created.permissions.join(', ')}; it ${expiry}. ` +
          'This is the only time the key is shown: keep it as a secret (SCANHUB_TOKEN) of your pipeline.',
      );
    });

  apiKeys
    .command('list')
    .description('list the API keys that are not revoked')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await collectAll<ApiKey>(session.client, `${session.base}/api-keys`), columns(session.io));
    });

  apiKeys
    .command('revoke <key>')
    .description('revoke an API key, by id or name: it is refused from the next request on')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const keys = await collectAll<ApiKey>(session.client, `${session.base}/api-keys`);
      const key = keys.find((k) => k.id === ref) ?? keys.find((k) => k.name === ref);
      if (!key) throw new CliError(`no API key with the id or name "${ref}" (revoked keys are not listed): \`scanhub api-keys list\` shows them`);
      await session.client.delete(`${session.base}/api-keys/${seg(key.id)}`);
      if (session.io.json) session.io.out(JSON.stringify(key, null, 2));
      success(session.io, `Revoked API key ${key.name} (${key.id}): it is refused from now on.`);
    });
}
