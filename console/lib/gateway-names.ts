import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import type { Gateway } from '../../src/client/gateways';
import { collectAll, customerPath } from './api';
import { can } from './session';

/** A gateway as a filter offers it: its id and its name. */
export interface GatewayName {
  id: string;
  name: string;
}

/** The customer's gateways by name, for pages that show a gateway's name beside its id or pick gateways. */
export interface GatewayNames {
  /** Sorted by name; empty when the user may not read gateways; undefined while loading. */
  gateways: Gateway[] | undefined;
  /** The gateway's name, or its id when it is unknown (deleted, or the user may not read gateways). */
  nameOf: (id: string | null | undefined) => string;
  error: unknown;
  /** Loads them again (a gateway created or renamed meanwhile). */
  reload: () => void;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * Every gateway of the customer, loaded once per page (a fleet is bounded, docs/console.md "The
 * Gateways board"). Without `gateway.read` the pages show ids rather than fail.
 */
export function useGatewayNames(): GatewayNames {
  const [gateways, setGateways] = useState<Gateway[]>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(() => {
    if (!can('gateway.read')) return setGateways([]);
    let current = true;
    collectAll<Gateway>(`${customerPath('/gateways')}?limit=500`).then(
      (all) => {
        if (!current) return;
        setGateways(all.sort((a, b) => collator.compare(a.name, b.name)));
        setError(undefined);
      },
      (failure) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, []);
  useEffect(reload, [reload]);
  const nameOf = useMemo(() => {
    const names = new Map((gateways ?? []).map((g) => [g.id, g.name]));
    return (id: string | null | undefined) => (id === null || id === undefined ? '' : (names.get(id) ?? id));
  }, [gateways]);
  return { gateways, nameOf, error, reload };
}
