import { useState } from 'preact/hooks';
import type { ApiKey } from '../../../src/client/api-keys';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { StatusMessage } from '../../components/status-message';
import { Table } from '../../components/table';
import { api, customerPath } from '../../lib/api';
import { dateTime } from '../../lib/time';
import { ApiKeyDialog } from './api-key-dialog';
import { NewApiKeyDialog, type CreatedApiKey } from './new-api-key-dialog';
import { SectionHeading } from './section-heading';
import { useAll } from './use-all';

type OpenDialog = { kind: 'new' } | { kind: 'created'; key: CreatedApiKey } | { kind: 'revoke'; key: ApiKey };

/** When a key expires, in words: "never", the date, or "expired" past it. */
function expiry(key: ApiKey, now: number): string {
  if (key.expires_at === null) return 'never';
  return key.expires_at <= now ? `expired ${dateTime(key.expires_at)}` : dateTime(key.expires_at);
}

/** The customer's API keys (never the keys themselves): make one, shown once; revoke one. */
export function ApiKeysSection() {
  const keys = useAll<ApiKey>('/api-keys');
  const [dialog, setDialog] = useState<OpenDialog>();
  const [status, setStatus] = useState<string>();
  const now = Date.now();
  return (
    <>
      <SectionHeading title="API keys">
        <Button kind="primary" onClick={() => setDialog({ kind: 'new' })}>
          New API key
        </Button>
      </SectionHeading>
      <p>Keys let scripts and pipelines call the API without a password. Each acts as the user who made it, with the permissions chosen for it.</p>
      <StatusMessage text={status} />
      <ErrorMessage error={keys.error} />
      {keys.items === undefined && !keys.error ? (
        <p class="loading">Loading API keys…</p>
      ) : (
        <Table
          caption="API keys"
          columns={[
            { header: 'Name', cell: (k) => k.name, rowHeader: true, class: 'name' },
            { header: 'Permissions', cell: (k) => <span class="mono">{k.permissions.join(', ')}</span> },
            { header: 'Created', cell: (k) => dateTime(k.created), class: 'nowrap' },
            { header: 'Expires', cell: (k) => expiry(k, now), class: 'nowrap' },
            { header: 'Last used', cell: (k) => (k.last_used === null ? 'never' : dateTime(k.last_used)), class: 'nowrap' },
            {
              header: 'Actions',
              cell: (k) => (
                <Button kind="danger" onClick={() => setDialog({ kind: 'revoke', key: k })}>
                  Revoke
                </Button>
              ),
            },
          ]}
          rows={keys.items ?? []}
          rowKey={(k) => k.id}
          empty="No API keys."
        />
      )}
      {dialog?.kind === 'new' && (
        <NewApiKeyDialog
          onClose={() => setDialog(undefined)}
          onCreated={(key) => {
            setDialog({ kind: 'created', key });
            setStatus(`Created API key "${key.name}".`);
            void keys.reload();
          }}
        />
      )}
      {dialog?.kind === 'created' && <ApiKeyDialog apiKey={dialog.key} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke the API key ${dialog.key.name}?`}
          confirm="Revoke"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.delete(customerPath(`/api-keys/${encodeURIComponent(dialog.key.id)}`));
            await keys.reload();
            setDialog(undefined);
            setStatus(`Revoked API key "${dialog.key.name}".`);
          }}
        >
          <p>Whatever uses it is refused from its next request on. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
