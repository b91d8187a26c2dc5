import type { Command } from 'commander';
import { registerDownloadCommand } from './download.js';
import { registerListCommand } from './list.js';
import { examples } from '../help.js';

/** `scanhub assets list|download`. */
export function registerAssetCommands(program: Command): void {
  const assets = program.command('assets').addHelpText('after', examples(['scanhub assets list'])).description('downloadable software assets (apps, firmware)');
  registerListCommand(assets);
  registerDownloadCommand(assets);
}
