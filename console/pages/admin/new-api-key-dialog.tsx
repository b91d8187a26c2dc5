import { useState } from 'preact/hooks';
import type { ApiKey } from '../../../src/client/api-keys';
import { Button } from '../../components/button';
import { CheckboxGroup } from '../../components/checkbox-group';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { SelectField } from '../../components/select-field';
import { api, customerPath } from '../../lib/api';
import { currentSession } from '../../lib/session';
import { useSubmit } from '../../lib/use-submit';

const DAY = 86_400_000;

/** The lifetimes offered, in days (`never`: the key does not expire). */
const EXPIRIES = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
] as const;

/** A key just made: the only answer that holds the key itself. */
export type CreatedApiKey = ApiKey & { key: string };

/**
 * Makes an API key (`POST /{c}/api-keys`) with the permissions chosen among the creator's own (a
 * key never holds more: docs/api-keys.md) and an expiry. None is chosen at first: a key for a
 * script should hold the few it needs, and the API names what is wrong with the choice.
 */
export function NewApiKeyDialog({ onCreated, onClose }: { onCreated: (key: CreatedApiKey) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<string[]>([]);
  const [expires, setExpires] = useState<string>('90');
  const { busy, error, submit } = useSubmit(async () => {
    const body = { name, permissions, ...(expires === 'never' ? {} : { expires_at: Date.now() + Number(expires) * DAY }) };
    onCreated(await api.post<CreatedApiKey>(customerPath('/api-keys'), body));
  });
  return (
    <Dialog title="New API key" onClose={onClose}>
      <form class="form" onSubmit={submit} noValidate>
        <Field label="Name" required maxLength={100} autofocus value={name} onValue={setName} hint="What uses it (nightly-report); unique among the keys." />
        <CheckboxGroup legend="Permissions" options={currentSession()?.user.permissions ?? []} selected={permissions} onChange={setPermissions} />
        <SelectField label="Expires" value={expires} onValue={setExpires} options={EXPIRIES} />
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
