import { useEffect, useId, useMemo, useState } from 'preact/hooks';
import type { Gateway } from '../../../../src/client/gateways';
import { Badge } from '../../../components/badge';
import { Button } from '../../../components/button';
import { ErrorMessage } from '../../../components/error-message';
import { ago, dateTime } from '../../../lib/time';
import { detailsLine, kindInWords, kindTone, subjectOf } from './alert-text';
import { useOpenAlerts } from './use-open-alerts';

/** Alerts listed before `Show all`: the panel stays a strip above the board however many are open. */
const FIRST_SHOWN = 5;

/**
 * The open alerts, on the Gateways board (region `Alerts`): kind, subject, since when and details,
 * an alert appearing as it opens and leaving as it resolves (docs/console.md "Alerts").
 */
export function AlertsPanel({ gateways }: { gateways: readonly Gateway[] | undefined }) {
  const { alerts, error } = useOpenAlerts();
  const [all, setAll] = useState(false);
  const [now, setNow] = useState(Date.now());
  const headingId = useId();
  useEffect(() => {
    // "5 min ago" moves on while the board stays open.
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  const nameOf = useMemo(() => {
    const names = new Map((gateways ?? []).map((g) => [g.id, g.name]));
    return (id: string) => names.get(id);
  }, [gateways]);
  const shown = all ? alerts : alerts?.slice(0, FIRST_SHOWN);
  return (
    <section class="alerts-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Alerts</h2>
      {alerts === undefined ? (
        !error && <p class="alerts-line">Loading alerts…</p>
      ) : alerts.length === 0 ? (
        <p class="alerts-line">No open alerts.</p>
      ) : (
        <ul class="alert-list">
          {shown!.map((alert) => (
            <li key={alert.alert_id}>
              <Badge tone={kindTone(alert.kind)}>{kindInWords(alert.kind)}</Badge> <strong class="alert-subject">{subjectOf(alert, nameOf)}</strong>{' '}
              <span class="muted nowrap">
                opened{' '}
                <time dateTime={new Date(alert.opened).toISOString()} title={dateTime(alert.opened)}>
                  {ago(alert.opened, now)}
                </time>
              </span>
              <span class="alert-details">{detailsLine(alert, nameOf)}</span>
            </li>
          ))}
        </ul>
      )}
      {alerts !== undefined && alerts.length > FIRST_SHOWN && (
        <Button class="alerts-more" onClick={() => setAll(!all)}>
          {all ? 'Show fewer' : `Show all ${alerts.length}`}
        </Button>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}
