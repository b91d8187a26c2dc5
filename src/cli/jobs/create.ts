import type { Command } from 'commander';
import { createJobConfig } from '../../client/jobs.js';
import { printObject, success } from '../io.js';
import { gatewayNames } from '../gateway-refs.js';
import { connect } from '../session.js';
import { configBody, type ConfigOptions } from './arguments.js';
import { jobFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub jobs create`. */
export function registerCreateCommand(jobs: Command): void {
  jobs
    .command('create')
    .addHelpText('after', examples(['scanhub jobs create --name Packing --start PACK- --end DONE- --gateway dock-1']))
    .description('create a job configuration')
    .requiredOption('--name <name>', 'job name, unique in the customer')
    .requiredOption('--start <prefix>', 'a scanned code beginning with this starts a job')
    .requiredOption('--end <prefix>', 'a scanned code beginning with this ends a job')
    .requiredOption('--gateway <gateway...>', 'gateway id(s) or name(s) the job runs on (repeat or list several)')
    .action(async (options: Required<ConfigOptions>, command: Command) => {
      const session = await connect(command);
      const job = await createJobConfig(session, await configBody(session, options));
      printObject(session.io, job, jobFields(session.io, session.io.json ? new Map() : await gatewayNames(session)));
      success(session.io, `Created job configuration "${job.job_name}" (${job.job_config_id}).`);
    });
}
