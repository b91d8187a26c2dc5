import type { Command } from 'commander';
import { deleteJobConfig } from '../../client/jobs.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';
import { resolveJob } from './arguments.js';
import { examples } from '../help.js';

/** `scanhub jobs delete <job>`. */
export function registerDeleteCommand(jobs: Command): void {
  jobs
    .command('delete <job>')
    .addHelpText('after', examples(['scanhub jobs delete Packing --yes']))
    .description('delete a job configuration (by id or name)')
    .option('--yes', 'do not ask for confirmation')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const job = await resolveJob(session, ref);
      await confirmAction(session.io, `Delete job configuration "${job.job_name}" (${job.job_config_id})?`, options.yes);
      await deleteJobConfig(session, job.job_config_id);
      success(session.io, `Deleted job configuration "${job.job_name}".`);
    });
}
