import { useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';
import { Button } from '../../components/button';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { api, customerPath } from '../../lib/api';
import { useSubmit } from '../../lib/use-submit';

/** Creates a gateway (`POST /{customer_id}/gateways`); the API checks the fields and names the wrong one. */
export function NewGatewayDialog({ onCreated, onClose }: { onCreated: (gateway: Gateway) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [usecase, setUsecase] = useState('');
  const [station, setStation] = useState('');
  const { busy, error, submit } = useSubmit(async () => onCreated(await api.post<Gateway>(customerPath('/gateways'), { name, usecase, station })));
  return (
    <Dialog title="New gateway" onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="Name" required maxLength={200} autofocus value={name} onValue={setName} hint="Unique among your gateways." />
        <Field label="Use case" required maxLength={200} value={usecase} onValue={setUsecase} />
        <Field label="Station" required maxLength={200} value={station} onValue={setStation} />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            Create
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
