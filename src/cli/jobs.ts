import type { Command } from 'commander';
import { seg } from '../client/api.js';
import { connect, type Session } from './connect.js';
import { UUID, gatewayIds } from './gateway-refs.js';
import { analysisCsv, printAnalysis, type JobAnalysis } from './job-report.js';
import { rangeQuery } from './event-output.js';
import { CliError, Exit, confirmAction, formatTime, printList, printObject, success, type Column, type Io } from './io.js';

// The API returns job configurations in the store's shape (spec 2.4); a type-only import, nothing of the store loads.
import type { JobConfig } from '../store/ports/index.js';


const columns = (io: Io): Column<JobConfig>[] => [
  { header: 'ID', value: (j) => j.job_config_id },
  { header: 'NAME', value: (j) => j.job_name },
  { header: 'START', value: (j) => j.start_barcode },
  { header: 'END', value: (j) => j.end_barcode },
  { header: 'GATEWAYS', value: (j) => j.gateway_ids.join(',') },
  { header: 'VERSION', value: (j) => j.version },
  { header: 'UPDATED', value: (j) => formatTime(io, j.last_updated) },
];

const fields = (io: Io): Column<JobConfig>[] => [
  { header: 'job_config_id', value: (j) => j.job_config_id },
  { header: 'job_name', value: (j) => j.job_name },
  { header: 'start_barcode', value: (j) => j.start_barcode },
  { header: 'end_barcode', value: (j) => j.end_barcode },
  { header: 'gateway_ids', value: (j) => j.gateway_ids.join(',') },
  { header: 'version', value: (j) => j.version },
  { header: 'created', value: (j) => formatTime(io, j.created) },
  { header: 'last_updated', value: (j) => formatTime(io, j.last_updated) },
];

const listPath = (session: Session) => `${session.base}/job-configs`;

/** The job configuration a user names by id or by job_name. */
async function resolveJob(session: Session, ref: string): Promise<JobConfig> {
  if (UUID.test(ref)) return session.client.get<JobConfig>(`${listPath(session)}/${seg(ref)}`);
  const { items } = await session.client.get<{ items: JobConfig[] }>(listPath(session));
  const job = items.find((j) => j.job_name === ref);
  if (!job) throw new CliError(`no job configuration is named "${ref}": see \`scanhub jobs list\``);
  return job;
}

interface ConfigOptions {
  name?: string;
  start?: string;
  end?: string;
  gateway?: string[];
}

/** The API body of the given options (only those given), gateway names turned into ids. */
async function configBody(session: Session, options: ConfigOptions): Promise<Record<string, unknown>> {
  return {
    ...(options.name !== undefined ? { job_name: options.name } : {}),
    ...(options.start !== undefined ? { start_barcode: options.start } : {}),
    ...(options.end !== undefined ? { end_barcode: options.end } : {}),
    ...(options.gateway !== undefined ? { gateway_ids: await gatewayIds(session, options.gateway) } : {}),
  };
}

/** `scanhub jobs list|get|create|update|delete|analyze`. */
export function registerJobCommands(program: Command): void {
  const jobs = program.command('jobs').description('job configurations (a start and an end barcode on gateways) and job analysis');

  jobs
    .command('list')
    .description('list the job configurations')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      const { items } = await session.client.get<{ items: JobConfig[] }>(listPath(session));
      printList(session.io, items, columns(session.io));
    });

  jobs
    .command('get <job>')
    .description('show a job configuration (by id or name)')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await resolveJob(session, ref), fields(session.io));
    });

  jobs
    .command('create')
    .description('create a job configuration')
    .requiredOption('--name <name>', 'job name, unique in the customer')
    .requiredOption('--start <prefix>', 'a scanned code beginning with this starts a job')
    .requiredOption('--end <prefix>', 'a scanned code beginning with this ends a job')
    .requiredOption('--gateway <gateway...>', 'gateway id(s) or name(s) the job runs on (repeat or list several)')
    .action(async (options: Required<ConfigOptions>, command: Command) => {
      const session = await connect(command);
      const job = await session.client.post<JobConfig>(listPath(session), await configBody(session, options));
      printObject(session.io, job, fields(session.io));
      success(session.io, `Created job configuration "${job.job_name}" (${job.job_config_id}).`);
    });

  jobs
    .command('update <job>')
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
      const body = await configBody(session, options);
      const current = await resolveJob(session, ref);
      // If-Match: a change made by someone else since we read it is refused, not overwritten.
      const job = await session.client.patch<JobConfig>(`${listPath(session)}/${seg(current.job_config_id)}`, body, {
        'if-match': String(current.version),
      });
      printObject(session.io, job, fields(session.io));
      success(session.io, `Updated job configuration "${job.job_name}" to version ${job.version}.`);
    });

  jobs
    .command('delete <job>')
    .description('delete a job configuration (by id or name)')
    .option('--yes', 'do not ask for confirmation')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const job = await resolveJob(session, ref);
      await confirmAction(session.io, `Delete job configuration "${job.job_name}" (${job.job_config_id})?`, options.yes);
      await session.client.delete(`${listPath(session)}/${seg(job.job_config_id)}`);
      success(session.io, `Deleted job configuration "${job.job_name}".`);
    });

  jobs
    .command('analyze <job>')
    .description('find the jobs of a job configuration (by id or name) in a time range; default the last 24 hours')
    .option('--from <time>', 'start of the range (ISO 8601, ms since the epoch, or a duration before now like 2h)')
    .option('--to <time>', 'end of the range, excluded (default: now)')
    .option('--since <duration>', 'the range from this long ago until now, e.g. 2h or 7d')
    .option('--csv', 'print CSV: gateway_id,start_time,end_time,duration_ms,start_event_id,end_event_id')
    .action(async (ref: string, options: { from?: string; to?: string; since?: string; csv?: boolean }, command: Command) => {
      const session = await connect(command);
      if (options.csv && session.io.json) throw new CliError('give either --csv or --json, not both', Exit.USAGE);
      // Bounds from the local clock (not left to the server): the report names them.
      const { start_time_millis, end_time_millis } = rangeQuery(options, Date.now(), true);
      const range = { start_time: start_time_millis!, end_time: end_time_millis! };
      const job = await resolveJob(session, ref);
      const analysis = await session.client.post<JobAnalysis>(`${session.base}/job-analysis`, { job_config_id: job.job_config_id, ...range });
      if (session.io.json) return session.io.out(JSON.stringify(analysis, null, 2));
      if (options.csv) return void process.stdout.write(analysisCsv(analysis));
      if (session.io.tty) {
        session.io.out(
          `Job "${job.job_name}": codes beginning with ${job.start_barcode} start a job, ${job.end_barcode} end it; ` +
            `${formatTime(session.io, range.start_time)} to ${formatTime(session.io, range.end_time)}.\n`,
        );
      }
      printAnalysis(session.io, analysis);
    });
}
