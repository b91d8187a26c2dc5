import { useEffect, useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { PageHeading } from '../../components/page-heading';
import { api, customerPath } from '../../lib/api';
import { useRoute } from '../../lib/router';
import { CommandsPanel } from './commands/commands-panel';
import { GatewayPageDetails } from './gateway-page-details';

const PREFIX = '/gateways/';

/** The gateway id of the route `#/gateways/{id}`; undefined when its escapes are broken. */
function gatewayIdOf(path: string): string | undefined {
  try {
    return decodeURIComponent(path.slice(PREFIX.length));
  } catch {
    return undefined;
  }
}

/** The page of one gateway (`#/gateways/{id}`, linked from its name on the board): its details and its commands. */
export function GatewayPage() {
  const route = useRoute();
  const id = gatewayIdOf(route.path);
  const [gateway, setGateway] = useState<Gateway>();
  const [error, setError] = useState<unknown>();
  const [reads, setReads] = useState(0);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (id === undefined) return setError(new Error(`${route.hash} is not the address of a gateway: go back to the gateways.`));
    const controller = new AbortController();
    api.get<Gateway>(customerPath(`/gateways/${encodeURIComponent(id)}`), { signal: controller.signal }).then(
      (found) => {
        setGateway(found);
        setError(undefined);
        setNow(Date.now());
      },
      (failure: unknown) => {
        if ((failure as Error).name !== 'AbortError') setError(failure);
      },
    );
    return () => controller.abort();
  }, [id, reads]);
  // Another gateway's page (a link followed from here) starts empty rather than showing this one.
  useEffect(() => setGateway(undefined), [id]);
  return (
    <>
      <p class="back-link">
        <a href="#/gateways">All gateways</a>
      </p>
      <PageHeading title={gateway?.name ?? 'Gateway'}>{gateway && <Button onClick={() => setReads((n) => n + 1)}>Refresh</Button>}</PageHeading>
      <ErrorMessage error={error} />
      {gateway === undefined ? (
        !error && <p class="loading">Loading the gateway…</p>
      ) : (
        <>
          <GatewayPageDetails gateway={gateway} now={now} />
          <CommandsPanel key={gateway.id} gatewayId={gateway.id} gatewayName={gateway.name} />
        </>
      )}
    </>
  );
}
