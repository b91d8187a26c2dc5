import type { Command } from 'commander';
import { analyzeJobs } from '../../client/jobs.js';
import { addRangeOptions, rangeQuery, type RangeOptions } from '../flags.js';
import { CliError, Exit, formatTime } from '../io.js';
import { gatewayNames } from '../gateway-refs.js';
import { connect } from '../session.js';
import { resolveJob } from './arguments.js';
import { analysisCsv, printAnalysis } from './report.js';
import { examples } from '../help.js';

/** `scanhub jobs analyze <job>`: the jobs of a configuration in a range, as a report, CSV or JSON. */
export function registerAnalyzeCommand(jobs: Command): void {
  addRangeOptions(
    jobs
      .command('analyze <job>')
      .addHelpText('after', examples(['scanhub jobs analyze Packing --since 8h', 'scanhub jobs analyze Packing --since 2026-11-01 --until 2026-11-08 --csv > packing.csv']))
      .description('find the jobs of a job configuration (by id or name) in a time range; default the last 24 hours'),
  )
    .option('--csv', 'print CSV: gateway_id,start_time,end_time,duration_ms,start_event_id,end_event_id')
    .action(async (ref: string, options: RangeOptions & { csv?: boolean }, command: Command) => {
      const session = await connect(command);
      if (options.csv && session.io.json) throw new CliError('give either --csv or --json, not both', Exit.USAGE);
      // Bounds from the local clock (not left to the server): the report names them.
      const { start_time_millis, end_time_millis } = rangeQuery(options, Date.now(), true);
      const range = { start_time: start_time_millis!, end_time: end_time_millis! };
      const job = await resolveJob(session, ref);
      const analysis = await analyzeJobs(session, { job_config_id: job.job_config_id, ...range });
      if (session.io.json) return session.io.out(JSON.stringify(analysis, null, 2));
      if (options.csv) return void process.stdout.write(analysisCsv(analysis));
      if (session.io.tty) {
        session.io.out(
          `Job "${job.job_name}": codes beginning with ${job.start_barcode} start a job, ${job.end_barcode} end it; ` +
            `${formatTime(session.io, range.start_time)} to ${formatTime(session.io, range.end_time)}.\n`,
        );
      }
      printAnalysis(session.io, analysis, await gatewayNames(session));
    });
}
