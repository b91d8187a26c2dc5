import type { Command } from 'commander';
import { printObject } from '../io.js';
import { gatewayNames } from '../gateway-refs.js';
import { connect } from '../session.js';
import { resolveJob } from './arguments.js';
import { jobFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub jobs get <job>`. */
export function registerGetCommand(jobs: Command): void {
  jobs
    .command('get <job>')
    .addHelpText('after', examples(['scanhub jobs get Packing']))
    .description('show a job configuration (by id or name)')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await resolveJob(session, ref), jobFields(session.io, session.io.json ? new Map() : await gatewayNames(session)));
    });
}
