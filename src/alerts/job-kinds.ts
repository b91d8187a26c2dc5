import type { AlertRecord, AlertRule, Store } from '../store/ports/index.js';
import type { AlertWriter } from './alert-writer.js';
import { allGateways } from './gateways.js';

type KindStore = Pick<Store, 'alerts' | 'jobConfigs' | 'gateways'>;

const openBySubject = async (store: KindStore, rule: AlertRule) => new Map((await store.alerts.openOf(rule.id)).map((alert): [string, AlertRecord] => [alert.subject.id, alert]));

/**
 * job_open_too_long (docs/alerts.md): a job of the rule's configuration open on a gateway for
 * `after_seconds` (from its start scan's `created`) opens an alert on the gateway; it resolves when
 * that job is no longer open (ended, replaced by a new start, or its configuration no longer names
 * the gateway or was deleted).
 */
export async function jobsOpenTooLong(store: KindStore, writer: AlertWriter, rule: AlertRule, now: number): Promise<void> {
  const configId = rule.parameters.job_config_id as string;
  const afterSeconds = rule.parameters.after_seconds as number;
  const [state, config] = await Promise.all([store.alerts.tracker(rule.customer_id), store.jobConfigs.byId(rule.customer_id, configId)]);
  const jobs = state && config ? state.open_jobs.filter((job) => job.job_config_id === configId && config.gateway_ids.includes(job.gateway_id)) : [];
  const open = await openBySubject(store, rule);
  for (const job of jobs) {
    const alert = open.get(job.gateway_id);
    if (alert?.details.start_event_id === job.start_event_id) {
      open.delete(job.gateway_id);
    } else if (now - job.opened_at >= afterSeconds * 1000) {
      // An alert of the job this one replaced resolves first: one alert per gateway and rule is open.
      if (alert) await writer.resolve(alert, now);
      open.delete(job.gateway_id);
      const details = { job_config_id: configId, job_name: config!.job_name, start_event_id: job.start_event_id, opened_at: job.opened_at, after_seconds: afterSeconds };
      await writer.open(rule, { type: 'gateway', id: job.gateway_id }, details, now);
    }
  }
  for (const alert of open.values()) await writer.resolve(alert, now);
}

/**
 * station_silent (docs/alerts.md): a gateway of the rule connected (to any instance) that has not
 * scanned for `after_seconds` while connected (counted from the newest of its last scan, its
 * connection, the rule's creation and the tracker's start) opens an alert; it resolves at its next
 * scan, when it is no longer connected (gateway_offline's business then), or when it is deleted
 * or no longer named by the rule.
 */
export async function stationsSilent(store: KindStore, writer: AlertWriter, rule: AlertRule, connected: ReadonlyMap<string, number>, now: number): Promise<void> {
  const afterMs = (rule.parameters.after_seconds as number) * 1000;
  const named = rule.parameters.gateway_ids as string[];
  const state = await store.alerts.tracker(rule.customer_id);
  // The tracker starts this round: no scan is known yet.
  if (!state) return;
  const gateways = (await allGateways(store, rule.customer_id)).filter((gateway) => named.includes(gateway.id));
  const open = await openBySubject(store, rule);
  for (const gateway of gateways) {
    const alert = open.get(gateway.id);
    open.delete(gateway.id);
    const lastScan = state.last_scans[gateway.id] ?? null;
    const since = connected.get(gateway.id);
    const silent = since !== undefined && now - Math.max(lastScan ?? 0, since, state.started, rule.created) >= afterMs;
    if (silent && !alert) {
      await writer.open(rule, { type: 'gateway', id: gateway.id }, { gateway_name: gateway.name, last_scan: lastScan, connected_since: since, after_seconds: afterMs / 1000 }, now);
    } else if (alert && (since === undefined || (lastScan ?? -1) > ((alert.details.last_scan as number | null) ?? -1))) {
      await writer.resolve(alert, now);
    }
  }
  for (const alert of open.values()) await writer.resolve(alert, now);
}
