import { useState } from 'preact/hooks';
import { AUDIT_ACTIONS } from '../../../src/domain/audit';
import { Button } from '../../components/button';
import { SelectField } from '../../components/select-field';
import { DateTimeField, epochOf, localDateTime } from './date-time-field';

/** The filters of `GET /{c}/audit-log` (docs/audit.md "Reading it"), as the API names them. */
export interface AuditFilter {
  start_time?: number;
  end_time?: number;
  action?: string;
}

const ACTIONS = [{ value: '', label: 'All actions' }, ...AUDIT_ACTIONS.map((action) => ({ value: action, label: action }))];

/** The audit log's filters: a time range (From included, To excluded) and an action; `Show` reads the first page. */
export function AuditFilters({ onFilter }: { onFilter: (filter: AuditFilter) => void }) {
  const [from, setFrom] = useState(() => localDateTime(Date.now() - 86_400_000));
  const [to, setTo] = useState('');
  const [action, setAction] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    onFilter({ start_time: epochOf(from), end_time: epochOf(to), action: action || undefined });
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Audit log filters">
      <DateTimeField label="From" value={from} onValue={setFrom} hint="Empty: a day ago." />
      <DateTimeField label="To" value={to} onValue={setTo} hint="Empty: now." />
      <SelectField label="Action" value={action} onValue={setAction} options={ACTIONS} />
      <div class="filters-submit">
        <Button type="submit" kind="primary">
          Show
        </Button>
      </div>
    </form>
  );
}
