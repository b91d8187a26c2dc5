import { useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';
import type { JobConfig, JobConfigFields } from '../../../src/client/jobs';
import { Button } from '../../components/button';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { api, customerPath } from '../../lib/api';
import { GatewayPicker } from './gateway-picker';

interface Props {
  /** The configuration to change; none for a new one. */
  config?: JobConfig;
  gateways: readonly Gateway[];
  nameOf: (id: string) => string;
  onSaved: (config: JobConfig) => void;
  onClose: () => void;
}

const sameIds = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * Creates a job configuration, or changes one: only the fields that differ are sent, with the
 * version it showed (`If-Match`), so that a change made meanwhile is refused rather than lost.
 */
export function JobConfigDialog({ config, gateways, nameOf, onSaved, onClose }: Props) {
  const [name, setName] = useState(config?.job_name ?? '');
  const [start, setStart] = useState(config?.start_barcode ?? '');
  const [end, setEnd] = useState(config?.end_barcode ?? '');
  const [gatewayIds, setGatewayIds] = useState<string[]>(config?.gateway_ids ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const save = async () => {
    const fields: JobConfigFields = { job_name: name, start_barcode: start, end_barcode: end, gateway_ids: gatewayIds };
    if (!config) return api.post<JobConfig>(customerPath('/job-configs'), fields);
    const changes: Partial<JobConfigFields> = {};
    if (name !== config.job_name) changes.job_name = name;
    if (start !== config.start_barcode) changes.start_barcode = start;
    if (end !== config.end_barcode) changes.end_barcode = end;
    // A gateway deleted since stays in the configuration: unchanged ids are not sent to be checked again.
    if (!sameIds(gatewayIds, config.gateway_ids)) changes.gateway_ids = gatewayIds;
    if (Object.keys(changes).length === 0) return config;
    return api.patch<JobConfig>(customerPath(`/job-configs/${encodeURIComponent(config.job_config_id)}`), changes, { 'if-match': String(config.version) });
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSaved(await save());
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <Dialog title={config ? `Edit ${config.job_name}` : 'New job configuration'} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="Name" required maxLength={200} autofocus value={name} onValue={setName} hint="Unique among your job configurations." />
        <Field label="Start barcode" required maxLength={500} spellcheck={false} value={start} onValue={setStart} hint="A scan whose code begins with this starts a job." />
        <Field label="End barcode" required maxLength={500} spellcheck={false} value={end} onValue={setEnd} hint="A scan whose code begins with this ends the open job." />
        <GatewayPicker gateways={gateways} chosen={gatewayIds} onChosen={setGatewayIds} nameOf={nameOf} />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            {config ? 'Save' : 'Create'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
