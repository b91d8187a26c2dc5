import type { Command } from 'commander';
import { registerListCommand } from './list.js';

/** `scanhub features list`. */
export function registerFeatureCommands(program: Command): void {
  const features = program.command('features').description('feature flags of the customer');
  registerListCommand(features);
}
