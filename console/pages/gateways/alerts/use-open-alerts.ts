import { useEffect, useState } from 'preact/hooks';
import type { Alert } from '../../../../src/client/alerts';
import { api, customerPath } from '../../../lib/api';
import { followEventStream } from '../../../lib/follow-stream';
import { can } from '../../../lib/session';
import { OpenAlerts } from './open-alerts';

export interface OpenAlertsView {
  /** Newest opened first; undefined until first read. */
  alerts: Alert[] | undefined;
  /** Why the list could not be read, or why it is not updating (the stream failed; it reconnects). */
  error: unknown;
}

const readOpen = async () => (await api.get<{ items: Alert[] }>(customerPath('/alerts?state=OPEN'))).items;

/**
 * The open alerts, kept current by the live stream with `?alerts=true&events=false` (docs/alerts.md): read
 * when each connection opens, changed by each `event: alert` frame. The stream needs
 * `event.read`; without it the list is read once.
 */
export function useOpenAlerts(): OpenAlertsView {
  const [view, setView] = useState<OpenAlertsView>({ alerts: undefined, error: undefined });
  useEffect(() => {
    const controller = new AbortController();
    const open = new OpenAlerts<Alert>();
    // Why the list could not be read; why the stream is not live (it reconnects meanwhile).
    let listError: unknown;
    let streamError: unknown;
    const show = () => setView({ alerts: open.loaded ? open.current() : undefined, error: listError ?? streamError });
    const list = (connection: number) =>
      readOpen().then(
        (alerts) => open.listed(connection, alerts) && ((listError = undefined), show()),
        (failure) => open.listed(connection, undefined) && ((listError = failure), show()),
      );
    if (!can('event.read')) {
      void list(open.connected());
      return () => controller.abort();
    }
    void followEventStream(customerPath('/events/stream?alerts=true&events=false'), {
      signal: controller.signal,
      onOpen: () => {
        streamError = undefined;
        void list(open.connected());
      },
      onItems: (items) => {
        let changed = false;
        for (const item of items) {
          if (item.kind !== 'event' || item.event !== 'alert') continue;
          open.frame(JSON.parse(item.data) as Alert);
          changed = true;
        }
        if (changed) show();
      },
      onBreak: (failure) => {
        if (failure === undefined) return;
        streamError = failure;
        show();
        // A stream refused (429: the user's streams are all taken) still leaves the list to show, without updates.
        if (!open.loaded) void list(open.connected());
      },
    });
    return () => controller.abort();
  }, []);
  return view;
}
