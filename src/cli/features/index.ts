import type { Command } from 'commander';
import { registerListCommand } from './list.js';
import { examples } from '../help.js';

/** `scanhub features list`. */
export function registerFeatureCommands(program: Command): void {
  const features = program.command('features').addHelpText('after', examples(['scanhub features list'])).description('feature flags of the customer');
  registerListCommand(features);
}
