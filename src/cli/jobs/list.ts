import type { Command } from 'commander';
import { listJobConfigs } from '../../client/jobs.js';
import { printList } from '../io.js';
import { gatewayNames } from '../gateway-refs.js';
import { connect } from '../session.js';
import { jobColumns } from './output.js';
import { examples } from '../help.js';

/** `scanhub jobs list`. */
export function registerListCommand(jobs: Command): void {
  jobs
    .command('list')
    .addHelpText('after', examples(['scanhub jobs list', 'scanhub jobs list --json']))
    .description('list the job configurations')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listJobConfigs(session), jobColumns(session.io, session.io.json ? new Map() : await gatewayNames(session)));
    });
}
