import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';
import type { Preparation } from '../../../src/client/provisioning';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { PageHeading } from '../../components/page-heading';
import { Pager } from '../../components/pager';
import { StatusMessage } from '../../components/status-message';
import { api, customerPath } from '../../lib/api';
import { can } from '../../lib/session';
import { AlertsPanel } from './alerts/alerts-panel';
import { CertificateDialog } from './certificate-dialog';
import type { GatewayAction } from './gateway-actions';
import { searchable, search } from './gateway-search';
import { GatewayTable } from './gateway-table';
import { GatewaySearch } from './gateway-search-field';
import { NewGatewayDialog } from './new-gateway-dialog';
import { ProvisioningDialog } from './provisioning-dialog';
import { useGateways } from './use-gateways';

/** Rows on one page of the board: enough to scan, few enough to render in a few milliseconds. */
export const BOARD_PAGE_SIZE = 50;

type OpenDialog =
  | { kind: 'new' }
  | { kind: 'provisioning'; gateway: Gateway; preparation: Preparation }
  | { kind: 'revoke' | 'delete' | 'certificate'; gateway: Gateway };

const gatewayPath = (gateway: Gateway, resource = '') => customerPath(`/gateways/${encodeURIComponent(gateway.id)}${resource}`);

/** The Gateways board: search, a page of rows, and what may be done to each gateway. */
export function GatewaysPage() {
  const list = useGateways();
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(0);
  const [dialog, setDialog] = useState<OpenDialog>();
  const [busy, setBusy] = useState<{ id: string; action: GatewayAction }>();
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<string>();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    // "5 min ago" moves on while the board stays open.
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);

  const ordered = useMemo(() => searchable(list.gateways ?? []), [list.gateways]);
  const found = useMemo(() => search(ordered, query), [ordered, query]);
  const pageCount = Math.max(1, Math.ceil(found.length / BOARD_PAGE_SIZE));
  const shown = found.slice(Math.min(page, pageCount - 1) * BOARD_PAGE_SIZE).slice(0, BOARD_PAGE_SIZE).map((s) => s.gateway);

  const prepare = async (gateway: Gateway, action: 'provision' | 'reprovision') => {
    const preparation = await api.post<Preparation>(gatewayPath(gateway, action === 'provision' ? '/prepare-provisioning' : '/reprovision'));
    setDialog({ kind: 'provisioning', gateway, preparation });
    await list.refresh(gateway.id);
  };
  const onAction = async (action: GatewayAction, gateway: Gateway) => {
    setError(undefined);
    setStatus(undefined);
    if (action !== 'provision' && action !== 'reprovision') return setDialog({ kind: action, gateway });
    setBusy({ id: gateway.id, action });
    try {
      await prepare(gateway, action);
    } catch (failure) {
      setDialog(undefined);
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };
  const created = (gateway: Gateway) => {
    list.add(gateway);
    setDialog(undefined);
    setQuery('');
    // The new gateway's page, so that its row (and its Provision button) is in sight.
    const position = searchable([...(list.gateways ?? []), gateway]).findIndex((s) => s.gateway.id === gateway.id);
    setPage(Math.floor(position / BOARD_PAGE_SIZE));
    setStatus(`Created gateway "${gateway.name}".`);
  };

  return (
    <>
      <PageHeading title="Gateways">
        <Button onClick={() => void list.reload()}>Refresh</Button>
        {can('gateway.write') && (
          <Button kind="primary" onClick={() => setDialog({ kind: 'new' })}>
            New gateway
          </Button>
        )}
      </PageHeading>
      <AlertsPanel gateways={list.gateways} />
      <GatewaySearch
        value={query}
        onValue={(value) => {
          setQuery(value);
          setPage(0);
        }}
      />
      <StatusMessage text={status} />
      <ErrorMessage error={error ?? list.error} />
      {list.gateways === undefined && !list.error ? (
        <p class="loading">Loading gateways…</p>
      ) : (
        <>
          <GatewayTable
            gateways={shown}
            now={now}
            busy={busy}
            onAction={onAction}
            empty={query ? 'No gateway matches the search.' : 'No gateways yet.'}
          />
          {found.length > BOARD_PAGE_SIZE && <Pager page={Math.min(page, pageCount - 1)} pageSize={BOARD_PAGE_SIZE} total={found.length} noun="Gateways" onPage={setPage} />}
        </>
      )}
      {dialog?.kind === 'new' && <NewGatewayDialog onCreated={created} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'provisioning' && <ProvisioningDialog gateway={dialog.gateway} preparation={dialog.preparation} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'certificate' && (
        <CertificateDialog gateway={dialog.gateway} onReprovision={(g) => void onAction('reprovision', g)} onClose={() => setDialog(undefined)} />
      )}
      {dialog?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke the certificate of ${dialog.gateway.name}?`}
          confirm="Revoke"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.post(gatewayPath(dialog.gateway, '/revoke-certificate'));
            await list.refresh(dialog.gateway.id);
            setDialog(undefined);
            setStatus(`Revoked the certificate of "${dialog.gateway.name}".`);
          }}
        >
          <p>Its connection is closed at once and it cannot connect again until it is re-provisioned.</p>
        </ConfirmDialog>
      )}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${dialog.gateway.name}?`}
          confirm="Delete"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.delete(gatewayPath(dialog.gateway));
            list.remove(dialog.gateway.id);
            setDialog(undefined);
            setStatus(`Deleted gateway "${dialog.gateway.name}".`);
          }}
        >
          <p>The gateway leaves the board, its certificate stops working and its connection is closed. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
