import type { Gateway } from '../../../src/client/gateways';
import { Button } from '../../components/button';
import { can } from '../../lib/session';

/** What a row's buttons ask for; the page runs it. */
export type GatewayAction = 'provision' | 'reprovision' | 'revoke' | 'certificate' | 'delete';

/**
 * The actions a gateway's state allows and the user's permissions offer. A gateway never prepared
 * is provisioned; one prepared before (its code handed out, its device connected, or its
 * certificate revoked) is re-provisioned; a registered one may also be revoked.
 */
export function actionsFor(gateway: Gateway): GatewayAction[] {
  const actions: GatewayAction[] = [];
  if (can('gateway.provision')) {
    if (gateway.connectivity_status !== 'NOT_REGISTERED') actions.push('reprovision', 'revoke');
    else actions.push(gateway.provisioned === null ? 'provision' : 'reprovision');
    actions.push('certificate');
  }
  if (can('gateway.write')) actions.push('delete');
  return actions;
}

const LABELS: Record<GatewayAction, string> = {
  provision: 'Provision',
  reprovision: 'Reprovision',
  revoke: 'Revoke',
  certificate: 'Certificate',
  delete: 'Delete',
};

interface Props {
  gateway: Gateway;
  /** The action running on this gateway, if any: its button is busy, the others wait. */
  busy: GatewayAction | undefined;
  onAction: (action: GatewayAction, gateway: Gateway) => void;
}

/** A row's buttons. */
export function GatewayActions({ gateway, busy, onAction }: Props) {
  return (
    <div class="row-actions">
      {actionsFor(gateway).map((action) => (
        <Button
          key={action}
          kind={action === 'delete' || action === 'revoke' ? 'danger' : 'secondary'}
          busy={busy === action}
          disabled={busy !== undefined}
          onClick={() => onAction(action, gateway)}
        >
          {LABELS[action]}
        </Button>
      ))}
    </div>
  );
}
