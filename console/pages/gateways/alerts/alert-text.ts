import type { Alert } from '../../../../src/client/alerts.js';
import { dateTime } from '../../../lib/time.js';

/** The kinds of docs/alerts.md in words; a kind this console does not know yet reads as its name. */
const KINDS: Record<string, string> = {
  gateway_offline: 'Gateway offline',
  device_low_battery: 'Low battery',
  job_open_too_long: 'Job open too long',
  station_silent: 'Station silent',
};

/** A gateway gone silent stops scans reaching the service; the other kinds warn of what comes. */
export const kindTone = (kind: string) => (kind === 'gateway_offline' ? 'bad' : 'warning');

export function kindInWords(kind: string): string {
  return KINDS[kind] ?? kind.charAt(0).toUpperCase() + kind.slice(1).replace(/_/g, ' ');
}

const seconds = (value: unknown) => (typeof value === 'number' ? (value < 120 ? `${value} s` : `${Math.round(value / 60)} min`) : '?');

/** What the alert is about: a gateway by its name (the board's, else the one the alert recorded), a scanner by its id. */
export function subjectOf(alert: Alert, nameOf: (id: string) => string | undefined): string {
  const { type, id } = alert.subject;
  if (type === 'gateway') return nameOf(id) ?? (typeof alert.details.gateway_name === 'string' ? alert.details.gateway_name : id);
  if (type === 'device') return `Scanner ${id}`;
  return `${type} ${id}`;
}

/** The alert's details in a line. */
export function detailsLine(alert: Alert, nameOf: (id: string) => string | undefined): string {
  const d = alert.details;
  if (alert.kind === 'gateway_offline') {
    const last = typeof d.last_message === 'number' ? `; the last at ${dateTime(d.last_message)}` : '';
    return `No message for over ${seconds(d.after_seconds)}${last}`;
  }
  if (alert.kind === 'device_low_battery') {
    const via = typeof d.last_gateway_id === 'string' ? `; last heard through ${nameOf(d.last_gateway_id) ?? d.last_gateway_id}` : '';
    return `Battery at ${String(d.battery)} %, below ${String(d.below_percent)} %${via}`;
  }
  if (alert.kind === 'station_silent') {
    const last = typeof d.last_scan === 'number' ? `the last at ${dateTime(d.last_scan)}` : 'none yet';
    const since = typeof d.connected_since === 'number' ? `Connected since ${dateTime(d.connected_since)}, ` : 'Connected, ';
    return `${since}no scan for over ${seconds(d.after_seconds)} (${last})`;
  }
  return Object.entries(d)
    .map(([key, value]) => `${key.replace(/_/g, ' ')}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join('; ');
}
