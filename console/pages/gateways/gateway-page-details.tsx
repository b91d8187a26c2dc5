import type { Gateway } from '../../../src/client/gateways';
import { ConnectivityBadge } from './connectivity-badge';
import { LastSeen } from './last-seen';

/** What the board's row says of the gateway, as a list of terms, with its id to quote. */
export function GatewayPageDetails({ gateway, now }: { gateway: Gateway; now: number }) {
  return (
    <dl class="details gateway-details">
      <dt>Status</dt>
      <dd>
        <ConnectivityBadge status={gateway.connectivity_status} />
      </dd>
      <dt>Last seen</dt>
      <dd>
        <LastSeen at={gateway.last_seen} now={now} />
      </dd>
      <dt>Station</dt>
      <dd>{gateway.station}</dd>
      <dt>Use case</dt>
      <dd>{gateway.usecase}</dd>
      <dt>Id</dt>
      <dd class="mono">{gateway.id}</dd>
    </dl>
  );
}
