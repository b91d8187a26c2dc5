import { useState } from 'preact/hooks';
import type { JobConfig } from '../../../src/client/jobs';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { PageHeading } from '../../components/page-heading';
import { StatusMessage } from '../../components/status-message';
import { api, customerPath } from '../../lib/api';
import { useGatewayNames } from '../../lib/gateway-names';
import { can } from '../../lib/session';
import { AnalysisPanel } from './analysis-panel';
import { JobConfigDialog } from './job-config-dialog';
import { JobConfigTable } from './job-config-table';
import { useJobConfigs } from './use-job-configs';

type OpenDialog = { kind: 'new' } | { kind: 'edit' | 'delete'; config: JobConfig };

/** The Jobs page: the job configurations (create, edit, delete) and the analysis of one over a range. */
export function JobsPage() {
  const list = useJobConfigs();
  const names = useGatewayNames();
  const [dialog, setDialog] = useState<OpenDialog>();
  const [status, setStatus] = useState<string>();
  const open = (next: OpenDialog) => {
    setStatus(undefined);
    setDialog(next);
  };
  const saved = (config: JobConfig, verb: string) => {
    list.put(config);
    setDialog(undefined);
    setStatus(`${verb} job configuration "${config.job_name}".`);
  };
  return (
    <>
      <PageHeading title="Jobs">
        <Button
          onClick={() => {
            void list.reload();
            names.reload();
          }}
        >
          Refresh
        </Button>
        {can('jobconfig.write') && (
          <Button kind="primary" onClick={() => open({ kind: 'new' })}>
            New job configuration
          </Button>
        )}
      </PageHeading>
      <StatusMessage text={status} />
      <ErrorMessage error={list.error ?? names.error} />
      {list.configs === undefined && !list.error ? (
        <p class="loading">Loading job configurations…</p>
      ) : (
        <JobConfigTable configs={list.configs ?? []} nameOf={names.nameOf} onEdit={(config) => open({ kind: 'edit', config })} onDelete={(config) => open({ kind: 'delete', config })} />
      )}
      {can('jobanalysis.run') && list.configs && <AnalysisPanel configs={list.configs} nameOf={names.nameOf} />}
      {(dialog?.kind === 'new' || dialog?.kind === 'edit') && (
        <JobConfigDialog
          config={dialog.kind === 'edit' ? dialog.config : undefined}
          gateways={names.gateways ?? []}
          nameOf={names.nameOf}
          onSaved={(config) => saved(config, dialog.kind === 'edit' ? 'Saved' : 'Created')}
          onClose={() => setDialog(undefined)}
        />
      )}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${dialog.config.job_name}?`}
          confirm="Delete"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.delete(customerPath(`/job-configs/${encodeURIComponent(dialog.config.job_config_id)}`));
            list.remove(dialog.config.job_config_id);
            setDialog(undefined);
            setStatus(`Deleted job configuration "${dialog.config.job_name}".`);
          }}
        >
          <p>The configuration goes; the events it analysed stay. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
