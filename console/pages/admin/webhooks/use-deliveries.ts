import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { WebhookDelivery } from '../../../../src/client/webhooks';
import { api, customerPath } from '../../../lib/api';

/** How often deliveries are read again after a test or replay, and for how many reads at most (15 s). */
const FOLLOW_MS = 500;
const FOLLOW_READS = 30;

export interface Deliveries {
  /** Newest first, as the API lists them (the newest 500 and every pending one); undefined until read. */
  items: WebhookDelivery[] | undefined;
  error: unknown;
  loading: boolean;
  /** Reads them again now. */
  refresh: () => Promise<void>;
  /**
   * Reads them after `firstMs`, then every half second until a new delivery is listed and none is
   * pending (15 s at most): a test or a replay is sent within moments, and its outcome shows
   * without asking.
   */
  follow: (firstMs: number) => void;
  /** Stops following and resolves once no read is in flight (a follow's or a Refresh's): before the webhook is deleted, so that no read asks for it after. */
  stop: () => Promise<void>;
}

/** A webhook's deliveries (`GET .../deliveries`), read when shown, on demand, and after a test or replay. */
export function useDeliveries(webhookId: string): Deliveries {
  const [items, setItems] = useState<WebhookDelivery[]>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const following = useRef(0);
  const latest = useRef<WebhookDelivery[] | undefined>(undefined);
  latest.current = items;
  const reading = useRef(new Set<Promise<unknown>>());
  const read = useCallback(async (): Promise<WebhookDelivery[] | undefined> => {
    setLoading(true);
    const request = api.get<{ items: WebhookDelivery[] }>(customerPath(`/webhooks/${encodeURIComponent(webhookId)}/deliveries?limit=500`));
    const settled: Promise<void> = request.then(
      () => void reading.current.delete(settled),
      () => void reading.current.delete(settled),
    );
    reading.current.add(settled);
    try {
      const page = await request;
      setItems(page.items);
      setError(undefined);
      return page.items;
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setLoading(false);
    }
  }, [webhookId]);
  const follow = useCallback(
    (firstMs: number) => {
      clearTimeout(timer.current);
      // A read in flight when the webhook goes (deleted, or another shown) must not schedule the next.
      const run = ++following.current;
      const newestBefore = latest.current?.[0]?.delivery_id;
      // Until the action's delivery is listed (a replay's first batch takes a moment to be made) and none is pending.
      const waiting = (items: WebhookDelivery[]) => items[0]?.delivery_id === newestBefore || items.some((d) => d.status === 'PENDING');
      const step = (left: number) => async () => {
        const items = await read();
        if (run === following.current && left > 1 && (items === undefined || waiting(items))) timer.current = setTimeout(step(left - 1), FOLLOW_MS);
      };
      timer.current = setTimeout(step(FOLLOW_READS), firstMs);
    },
    [read],
  );
  useEffect(() => {
    void read();
    return () => {
      following.current++;
      clearTimeout(timer.current);
    };
  }, [read]);
  const stop = useCallback(async () => {
    following.current++;
    clearTimeout(timer.current);
    await Promise.all(reading.current);
  }, []);
  return { items, error, loading, refresh: async () => void (await read()), follow, stop };
}
