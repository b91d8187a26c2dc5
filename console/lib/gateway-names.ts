import { useEffect, useState } from 'preact/hooks';
import type { Gateway } from '../../src/client/gateways';
import { collectAll, customerPath } from './api';
import { can } from './session';

/** A gateway as a filter offers it: its id and its name. */
export interface GatewayName {
  id: string;
  name: string;
}

export interface GatewayNames {
  /** By name; undefined while loading. */
  gateways: GatewayName[] | undefined;
  /** The name of a gateway id, or its short id when the gateway is unknown (deleted, or of the list not yet loaded). */
  nameOf: (id: string | undefined) => string;
  error: unknown;
}

/**
 * The customer's gateways by name, for the pages that filter events by gateway and name the
 * gateway of each event (which carries only its id). A fleet is bounded, so the whole list is read.
 */
export function useGatewayNames(): GatewayNames {
  const [gateways, setGateways] = useState<GatewayName[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    // Without gateway.read the events still show, their gateways by short id, and no gateway to choose.
    if (!can('gateway.read')) return setGateways([]);
    let current = true;
    collectAll<Gateway>(`${customerPath('/gateways')}?limit=500`).then(
      (all) => current && setGateways(all.map(({ id, name }) => ({ id, name })).sort((a, b) => a.name.localeCompare(b.name))),
      (failure) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, []);
  const names = new Map(gateways?.map((g) => [g.id, g.name]));
  const nameOf = (id: string | undefined) => (id === undefined ? '' : (names.get(id) ?? id.slice(0, 8)));
  return { gateways, nameOf, error };
}
