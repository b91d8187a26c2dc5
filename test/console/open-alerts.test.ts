import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/client/alerts.js';
import { OpenAlerts } from '../../console/pages/gateways/alerts/open-alerts.js';
import { detailsLine } from '../../console/pages/gateways/alerts/alert-text.js';
import { dateTime } from '../../console/lib/time.js';

// The Alerts panel's merge of the list read at each connection with the stream's alert frames
// (docs/console.md "Alerts"): alerts are not in the commit order, so neither can be trusted alone.

const alert = (id: string, state: 'OPEN' | 'RESOLVED', opened: number): Alert => ({
  alert_id: id,
  rule_id: 'r',
  kind: 'gateway_offline',
  subject: { type: 'gateway', id: `g-${id}` },
  state,
  opened,
  details: {},
});
const ids = (open: OpenAlerts<Alert>) => open.current().map((a) => a.alert_id);

describe('OpenAlerts', () => {
  it('applies the frames that arrived before the list over it: an alert resolved meanwhile is not brought back, one opened meanwhile is not lost', () => {
    const open = new OpenAlerts<Alert>();
    const connection = open.connected();
    open.frame(alert('a', 'RESOLVED', 1));
    open.frame(alert('c', 'OPEN', 3));
    expect(open.loaded).toBe(false);
    // The list was read before a resolved and c opened.
    expect(open.listed(connection, [alert('b', 'OPEN', 2), alert('a', 'OPEN', 1)])).toBe(true);
    expect(ids(open)).toEqual(['c', 'b']);
    // Afterwards each frame applies at once.
    open.frame(alert('b', 'RESOLVED', 2));
    open.frame(alert('d', 'OPEN', 4));
    expect(ids(open)).toEqual(['d', 'c']);
  });

  it('ignores the list of a connection that a newer one replaced, and keeps what it had when a list fails', () => {
    const open = new OpenAlerts<Alert>();
    const first = open.connected();
    const second = open.connected();
    expect(open.listed(first, [alert('old', 'OPEN', 1)])).toBe(false);
    expect(open.listed(second, [alert('a', 'OPEN', 1)])).toBe(true);
    const third = open.connected();
    open.frame(alert('b', 'OPEN', 2));
    expect(open.listed(third, undefined)).toBe(true);
    expect(ids(open)).toEqual(['b', 'a']);
  });
});

describe('detailsLine', () => {
  it('says of a silent station since when it is connected and its last scan, in words', () => {
    const silent: Alert = { ...alert('s', 'OPEN', 5), kind: 'station_silent', details: { gateway_name: 'press-1', last_scan: 1_000, connected_since: 2_000, after_seconds: 300 } };
    expect(detailsLine(silent, () => undefined)).toBe(`Connected since ${dateTime(2_000)}, no scan for over 5 min (the last at ${dateTime(1_000)})`);
    expect(detailsLine({ ...silent, details: { last_scan: null, connected_since: 2_000, after_seconds: 30 } }, () => undefined)).toBe(`Connected since ${dateTime(2_000)}, no scan for over 30 s (none yet)`);
  });
});
