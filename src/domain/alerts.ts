import { LAST_MESSAGE_RESOLUTION_MS } from './connectivity.js';
import type { WebhookEventType } from './webhooks.js';

/** The rules of alerts (docs/alerts.md). */

/** Every kind of rule (docs/alerts.md "Kinds"). */
export const ALERT_KINDS = ['gateway_offline', 'device_low_battery', 'job_open_too_long', 'station_silent'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
/** The webhook messages the evaluator sends besides alerts (docs/alerts.md "Jobs", "Connectivity"). */
export const JOB_COMPLETED_MESSAGE_TYPE = 'job.completed' satisfies WebhookEventType;
export const CONNECTIVITY_MESSAGE_TYPE = 'gateway.connectivity' satisfies WebhookEventType;

/** The parameters each kind takes: those it needs, then those it may have. */
export const ALERT_PARAMETERS: Record<AlertKind, { required: readonly string[]; optional: readonly string[] }> = {
  gateway_offline: { required: ['after_seconds'], optional: ['gateway_ids'] },
  device_low_battery: { required: ['below_percent'], optional: [] },
  job_open_too_long: { required: ['job_config_id', 'after_seconds'], optional: [] },
  station_silent: { required: ['gateway_ids', 'after_seconds'], optional: [] },
};

/**
 * Percentage points above `below_percent` a low battery must climb back to before its alert
 * resolves: a battery read at 19, 20, 19 % must not open and resolve alerts in turn.
 */
export const BATTERY_HYSTERESIS = 5;

/** How often the evaluator looks (ServeOptions may change it). */
export const DEFAULT_ALERT_INTERVAL_MS = 2_000;

/**
 * Whether a gateway whose stored last message is `lastMessage` has been silent for `afterSeconds`
 * at `now`. The stored time may lag the real last message by up to LAST_MESSAGE_RESOLUTION_MS
 * (ingest writes it again only then), so the alert waits for that too: never before `afterSeconds`
 * of silence, at most LAST_MESSAGE_RESOLUTION_MS after. A gateway that never sent is not offline.
 */
export function gatewayOffline(lastMessage: number | null, now: number, afterSeconds: number): boolean {
  return lastMessage !== null && now - lastMessage >= afterSeconds * 1000 + LAST_MESSAGE_RESOLUTION_MS;
}

/** An alert as stored, in the shape alertView needs. */
interface AlertFacts {
  id: string;
  rule_id: string;
  kind: string;
  subject: { type: string; id: string };
  state: 'OPEN' | 'RESOLVED';
  opened: number;
  resolved: number | null;
  details: Record<string, unknown>;
}

/** An alert as the API and the webhooks' `alert.opened` / `alert.resolved` messages show it. */
export function alertView(alert: AlertFacts) {
  return {
    alert_id: alert.id,
    rule_id: alert.rule_id,
    kind: alert.kind,
    subject: alert.subject,
    state: alert.state,
    opened: alert.opened,
    ...(alert.resolved !== null ? { resolved: alert.resolved } : {}),
    details: alert.details,
  };
}
