/**
 * Job configurations (docs/jobs-and-assets.md "Job configurations"): what a write may change, and
 * the checks both stores make before it. Plain functions, no I/O.
 */

/** A job configuration as stored and as the API shows it. */
export interface JobConfig {
  job_config_id: string;
  job_name: string;
  created: number;
  last_updated: number;
  start_barcode: string;
  end_barcode: string;
  gateway_ids: string[];
  class: 'jobconfig';
  version: number;
}

export interface JobConfigFields {
  job_name: string;
  start_barcode: string;
  end_barcode: string;
  gateway_ids: string[];
}

/** Why a write was refused. */
export type JobConfigRefusal =
  | { refused: 'name-taken' }
  | { refused: 'unknown-gateway'; gateway_id: string }
  | { refused: 'missing' }
  | { refused: 'stale'; version: number };

/** The refusal of an update whose `expectedVersion` (from If-Match) is not the current one; undefined when it may go on. */
export function staleVersion(current: JobConfig, expectedVersion: number | undefined): JobConfigRefusal | undefined {
  return expectedVersion !== undefined && expectedVersion !== current.version ? { refused: 'stale', version: current.version } : undefined;
}

/** The fields after an update: each given change, the current value otherwise. */
export function mergedFields(current: JobConfig, changes: Partial<JobConfigFields>): JobConfigFields {
  return {
    job_name: changes.job_name ?? current.job_name,
    start_barcode: changes.start_barcode ?? current.start_barcode,
    end_barcode: changes.end_barcode ?? current.end_barcode,
    gateway_ids: changes.gateway_ids ?? current.gateway_ids,
  };
}

/** What an update checks: only gateways being set, so that a gateway deleted since does not block a rename. */
export function fieldsToCheck(fields: JobConfigFields, changes: Partial<JobConfigFields>): JobConfigFields {
  return { ...fields, gateway_ids: changes.gateway_ids ?? [] };
}
