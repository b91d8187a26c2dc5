import { useId, useMemo, useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';

/** Unchosen gateways shown at once: a fleet of thousands is found by typing, not by scrolling. */
const SHOWN = 30;

interface Props {
  gateways: readonly Gateway[];
  /** The chosen ids, in the order the analysis lists them. */
  chosen: readonly string[];
  onChosen: (ids: string[]) => void;
  nameOf: (id: string) => string;
}

/**
 * The gateways of a job configuration: a checkbox each, the chosen ones first (in the order
 * chosen, the order of the analysis results), then those whose name or station holds the words typed.
 */
export function GatewayPicker({ gateways, chosen, onChosen, nameOf }: Props) {
  const id = useId();
  const [query, setQuery] = useState('');
  const matches = useMemo(() => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const taken = new Set(chosen);
    return gateways.filter((g) => !taken.has(g.id) && words.every((w) => `${g.name}\n${g.station}`.toLowerCase().includes(w)));
  }, [gateways, chosen, query]);
  const toggle = (gatewayId: string, on: boolean) => onChosen(on ? [...chosen, gatewayId] : chosen.filter((c) => c !== gatewayId));
  const box = (gatewayId: string, checked: boolean) => (
    <li key={gatewayId}>
      <label>
        <input type="checkbox" checked={checked} onChange={(event) => toggle(gatewayId, event.currentTarget.checked)} />
        {nameOf(gatewayId)}
      </label>
    </li>
  );
  return (
    <fieldset class="gateway-picker">
      <legend>Gateways</legend>
      <div class="field">
        <label for={id}>Find gateways</label>
        <input id={id} type="search" value={query} autocomplete="off" onInput={(event) => setQuery(event.currentTarget.value)} />
      </div>
      <ul class="gateway-choices">
        {chosen.map((g) => box(g, true))}
        {matches.slice(0, SHOWN).map((g) => box(g.id, false))}
      </ul>
      <p class="hint" aria-live="polite">
        {`${chosen.length} chosen.`}
        {matches.length > SHOWN ? ` ${matches.length - SHOWN} more match: type to narrow them down.` : ''}
      </p>
    </fieldset>
  );
}
