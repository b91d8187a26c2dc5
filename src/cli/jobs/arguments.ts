import type { CustomerApi } from '../../client/api.js';
import { getJobConfig, listJobConfigs, type JobConfig, type JobConfigFields } from '../../client/jobs.js';
import { UUID, gatewayIds } from '../gateway-refs.js';
import { CliError } from '../io.js';

// What the job verbs make of their arguments: the configuration a user names, the body of the flags.

/** The job configuration a user names by id or by job_name. */
export async function resolveJob(api: CustomerApi, ref: string): Promise<JobConfig> {
  if (UUID.test(ref)) return getJobConfig(api, ref);
  const job = (await listJobConfigs(api)).find((j) => j.job_name === ref);
  if (!job) throw new CliError(`no job configuration is named "${ref}": see \`scanhub jobs list\``);
  return job;
}

/** The flags of `create` and `update`. */
export interface ConfigOptions {
  name?: string;
  start?: string;
  end?: string;
  gateway?: string[];
}

/** The API body of the given options (only those given), gateway names turned into ids. */
export async function configBody(api: CustomerApi, options: ConfigOptions): Promise<Partial<JobConfigFields>> {
  return {
    ...(options.name !== undefined ? { job_name: options.name } : {}),
    ...(options.start !== undefined ? { start_barcode: options.start } : {}),
    ...(options.end !== undefined ? { end_barcode: options.end } : {}),
    ...(options.gateway !== undefined ? { gateway_ids: await gatewayIds(api, options.gateway) } : {}),
  };
}
