import type { JobConfig } from '../../client/jobs.js';
import { gatewayLabel } from '../gateway-refs.js';
import { formatTime, type Column, type Io } from '../io.js';

/** The gateways of a configuration, each by name beside its short id where the name is known. */
const gatewaysOf = (j: JobConfig, names: ReadonlyMap<string, string>) => j.gateway_ids.map((id) => gatewayLabel(id, names)).join(',');

/** The columns of the job configuration table. */
export const jobColumns = (io: Io, names: ReadonlyMap<string, string> = new Map()): Column<JobConfig>[] => [
  { header: 'ID', value: (j) => j.job_config_id },
  { header: 'NAME', value: (j) => j.job_name },
  { header: 'START', value: (j) => j.start_barcode },
  { header: 'END', value: (j) => j.end_barcode },
  { header: 'GATEWAYS', value: (j) => gatewaysOf(j, names) },
  { header: 'VERSION', value: (j) => j.version },
  { header: 'UPDATED', value: (j) => formatTime(io, j.last_updated) },
];

/** The fields of one job configuration (`get`, `create`, `update`). */
export const jobFields = (io: Io, names: ReadonlyMap<string, string> = new Map()): Column<JobConfig>[] => [
  { header: 'job_config_id', value: (j) => j.job_config_id },
  { header: 'job_name', value: (j) => j.job_name },
  { header: 'start_barcode', value: (j) => j.start_barcode },
  { header: 'end_barcode', value: (j) => j.end_barcode },
  { header: 'gateways', value: (j) => gatewaysOf(j, names) },
  { header: 'version', value: (j) => j.version },
  { header: 'created', value: (j) => formatTime(io, j.created) },
  { header: 'last_updated', value: (j) => formatTime(io, j.last_updated) },
];
