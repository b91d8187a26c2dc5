import type { Command } from 'commander';
import { updateJobConfig } from '../../client/jobs.js';
import { CliError, Exit, printObject, success } from '../io.js';
import { gatewayNames } from '../gateway-refs.js';
import { connect } from '../session.js';
import { configBody, resolveJob, type ConfigOptions } from './arguments.js';
import { jobFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub jobs update <job>`. */
export function registerUpdateCommand(jobs: Command): void {
  jobs
    .command('update <job>')
    .addHelpText('after', examples(['scanhub jobs update Packing --end PACK-DONE --gateway dock-1 dock-2']))
    .description('change name, barcodes or gateways of a job configuration (by id or name)')
    .option('--name <name>', 'new job name')
    .option('--start <prefix>', 'new start barcode prefix')
    .option('--end <prefix>', 'new end barcode prefix')
    .option('--gateway <gateway...>', 'the new list of gateway ids or names (replaces the old one)')
    .action(async (ref: string, options: ConfigOptions, command: Command) => {
      const session = await connect(command);
      if (Object.values(options).every((value) => value === undefined)) {
        throw new CliError('nothing to change: give --name, --start, --end or --gateway', Exit.USAGE);
      }
      const changes = await configBody(session, options);
      const current = await resolveJob(session, ref);
      // If-Match: a change made by someone else since we read it is refused, not overwritten.
      const job = await updateJobConfig(session, current.job_config_id, changes, current.version);
      printObject(session.io, job, jobFields(session.io, session.io.json ? new Map() : await gatewayNames(session)));
      success(session.io, `Updated job configuration "${job.job_name}" to version ${job.version}.`);
    });
}
