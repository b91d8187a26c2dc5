import type { JobConfig } from '../../../src/client/jobs';
import { Button } from '../../components/button';
import { Table, type Column } from '../../components/table';
import { can } from '../../lib/session';
import { dateTime } from '../../lib/time';

interface Props {
  configs: readonly JobConfig[];
  nameOf: (id: string) => string;
  onEdit: (config: JobConfig) => void;
  onDelete: (config: JobConfig) => void;
}

/** The configurations, a row each, named by `job_name`; Edit and Delete for those who may write them. */
export function JobConfigTable({ configs, nameOf, onEdit, onDelete }: Props) {
  const columns: Column<JobConfig>[] = [
    { header: 'Name', cell: (c) => c.job_name, rowHeader: true, class: 'name' },
    { header: 'Start barcode', cell: (c) => <span class="mono">{c.start_barcode}</span> },
    { header: 'End barcode', cell: (c) => <span class="mono">{c.end_barcode}</span> },
    { header: 'Gateways', cell: (c) => c.gateway_ids.map(nameOf).join(', '), class: 'job-gateways' },
    { header: 'Updated', cell: (c) => <time dateTime={new Date(c.last_updated).toISOString()}>{dateTime(c.last_updated)}</time>, class: 'nowrap' },
  ];
  if (can('jobconfig.write')) {
    columns.push({
      header: 'Actions',
      cell: (c) => (
        <div class="row-actions">
          <Button onClick={() => onEdit(c)}>Edit</Button>
          <Button kind="danger" onClick={() => onDelete(c)}>
            Delete
          </Button>
        </div>
      ),
    });
  }
  return <Table caption="Job configurations" columns={columns} rows={configs} rowKey={(c) => c.job_config_id} empty="No job configurations yet." />;
}
