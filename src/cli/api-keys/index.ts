import type { Command } from 'commander';
import { registerCreateCommand } from './create.js';
import { registerListCommand } from './list.js';
import { registerRevokeCommand } from './revoke.js';
import { examples } from '../help.js';

/** `scanhub api-keys create|list|revoke`. */
export function registerApiKeyCommands(program: Command): void {
  const apiKeys = program.command('api-keys').addHelpText('after', examples(['scanhub api-keys create --name ci --permission event.read'])).description('API keys for scripts and CI (use one as SCANHUB_TOKEN)');
  registerCreateCommand(apiKeys);
  registerListCommand(apiKeys);
  registerRevokeCommand(apiKeys);
}
