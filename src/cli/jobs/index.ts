import type { Command } from 'commander';
import { registerAnalyzeCommand } from './analyze.js';
import { registerCreateCommand } from './create.js';
import { registerDeleteCommand } from './delete.js';
import { registerGetCommand } from './get.js';
import { registerListCommand } from './list.js';
import { registerUpdateCommand } from './update.js';
import { examples } from '../help.js';

/** `scanhub jobs list|get|create|update|delete|analyze`. */
export function registerJobCommands(program: Command): void {
  const jobs = program.command('jobs').addHelpText('after', examples(['scanhub jobs list', 'scanhub jobs analyze Packing --since 8h'])).description('job configurations (a start and an end barcode on gateways) and job analysis');
  registerListCommand(jobs);
  registerGetCommand(jobs);
  registerCreateCommand(jobs);
  registerUpdateCommand(jobs);
  registerDeleteCommand(jobs);
  registerAnalyzeCommand(jobs);
}
