import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Gateway } from '../../../src/client/gateways';
import { api, collectAll, customerPath } from '../../lib/api';

/** The API's largest page: 2,000 gateways arrive in four requests. */
const PAGE_LIMIT = 500;

export interface GatewayList {
  gateways: Gateway[] | undefined;
  error: unknown;
  /** Loads the whole list again. */
  reload: () => Promise<void>;
  /** Reads one gateway again after an action changed it. */
  refresh: (id: string) => Promise<void>;
  add: (gateway: Gateway) => void;
  remove: (id: string) => void;
}

/**
 * Every gateway of the customer, in memory: the board searches them as the user types. A fleet is
 * bounded by the devices a customer owns, unlike events, so the whole list is held.
 */
export function useGateways(): GatewayList {
  const [gateways, setGateways] = useState<Gateway[]>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    try {
      setGateways(await collectAll<Gateway>(`${customerPath('/gateways')}?limit=${PAGE_LIMIT}`));
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  }, []);
  useEffect(() => void reload(), [reload]);
  const refresh = useCallback(async (id: string) => {
    const fresh = await api.get<Gateway>(customerPath(`/gateways/${encodeURIComponent(id)}`));
    setGateways((list) => list?.map((g) => (g.id === id ? fresh : g)));
  }, []);
  const add = useCallback((gateway: Gateway) => setGateways((list) => [...(list ?? []), gateway]), []);
  const remove = useCallback((id: string) => setGateways((list) => list?.filter((g) => g.id !== id)), []);
  return { gateways, error, reload, refresh, add, remove };
}
