import { useId } from 'preact/hooks';
import type { GatewayName } from '../lib/gateway-names';

interface Props {
  gateways: readonly GatewayName[] | undefined;
  /** The chosen gateway's id; empty for every gateway. */
  value: string;
  onValue: (id: string) => void;
}

/** A choice of one gateway, or all, labelled `Gateway` (DESIGN.md "Web console"). */
export function GatewayFilter({ gateways, value, onValue }: Props) {
  const id = useId();
  return (
    <div class="field gateway-filter">
      <label for={id}>Gateway</label>
      <select id={id} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
        <option value="">All gateways</option>
        {gateways?.map((g) => (
          <option key={g.id} value={g.id}>
            {g.name}
          </option>
        ))}
      </select>
    </div>
  );
}
