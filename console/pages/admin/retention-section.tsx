import { useEffect, useState } from 'preact/hooks';
import type { RetentionRecord } from '../../../src/client/retention';
import { ErrorMessage } from '../../components/error-message';
import { StatusMessage } from '../../components/status-message';
import { api, customerPath } from '../../lib/api';
import { can } from '../../lib/session';
import { dateTime } from '../../lib/time';
import { RetentionForm } from './retention-form';
import { SectionHeading } from './section-heading';

const kept = (days: number | null) => (days === null ? 'for ever' : `${days.toLocaleString()} day${days === 1 ? '' : 's'}`);

/** The period as stored and the last deletion pass (docs/retention.md "The API"). */
function RetentionSummary({ record }: { record: RetentionRecord }) {
  const last = record.last_deletion;
  return (
    <dl class="details retention-summary">
      <dt>Events are kept</dt>
      <dd>{kept(record.events_days)}</dd>
      <dt>Last deletion</dt>
      <dd>
        {last
          ? `${last.deleted.toLocaleString()} events older than ${dateTime(last.cutoff)}, in ${last.batches.toLocaleString()} batches (the longest ${last.longest_batch_ms} ms), finished ${dateTime(last.finished)}`
          : 'none yet'}
      </dd>
    </dl>
  );
}

/** How long the customer's events are kept: read with `retention.read`, set with `retention.write`. */
export function RetentionSection() {
  const [record, setRecord] = useState<RetentionRecord>();
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<string>();
  useEffect(() => {
    api.get<RetentionRecord>(customerPath('/retention')).then(setRecord, setError);
  }, []);
  return (
    <>
      <SectionHeading title="Retention" />
      <p>Events older than the period are deleted in small batches while scanning goes on. The audit log, users and gateways are never deleted.</p>
      <ErrorMessage error={error} />
      {!record && !error && <p class="loading">Loading…</p>}
      {record && <RetentionSummary record={record} />}
      <StatusMessage text={status} />
      {record && can('retention.write') && (
        <RetentionForm
          record={record}
          onSaved={(saved) => {
            setRecord(saved);
            setStatus(`Saved: events are kept ${kept(saved.events_days)}.`);
          }}
        />
      )}
    </>
  );
}
