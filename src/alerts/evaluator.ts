import { BATTERY_HYSTERESIS, CONNECTIVITY_MESSAGE_TYPE, DEFAULT_ALERT_INTERVAL_MS, JOB_COMPLETED_MESSAGE_TYPE, gatewayOffline } from '../domain/alerts.js';
import type { AlertRule, Store } from '../store/ports/index.js';
import { AlertWriter } from './alert-writer.js';
import { ConnectivityWatcher } from './connectivity.js';
import { allGateways } from './gateways.js';
import { JobTracker } from './job-tracker.js';
import { jobsOpenTooLong, stationsSilent } from './job-kinds.js';

export interface EvaluatorOptions {
  store: Store;
  clock?: () => number;
  intervalMs?: number;
  /** This instance's name in the lease (unique per process). */
  instance: string;
  log?: { warn(fields: object, message: string): void };
}

/**
 * Evaluates the alert rules every intervalMs on one instance at a time (the lease `alerts`; on
 * SQLite the one process): opens an alert once per rule and subject while its condition holds and
 * resolves it once when it clears, queuing the webhook messages in the same transactions
 * (docs/alerts.md). Before the rules, the job tracker reads on (job_open_too_long and station_silent
 * use its state; it sends `job.completed`), and after them the connectivity watcher sends
 * `gateway.connectivity`.
 */
export class AlertEvaluator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly clock: () => number;
  private readonly intervalMs: number;
  private readonly writer: AlertWriter;
  private readonly jobs: JobTracker;
  private readonly connectivity: ConnectivityWatcher;

  constructor(private readonly options: EvaluatorOptions) {
    this.clock = options.clock ?? Date.now;
    this.intervalMs = options.intervalMs ?? DEFAULT_ALERT_INTERVAL_MS;
    this.writer = new AlertWriter(options.store);
    this.jobs = new JobTracker(options.store, this.writer);
    this.connectivity = new ConnectivityWatcher(options.store, this.writer);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.options.store.leases.release('alerts', this.options.instance).catch(() => undefined);
  }

  private async tick(): Promise<void> {
    const { store, instance } = this.options;
    try {
      // Held for three rounds: an instance that stops renewing leaves the work to another soon after.
      if (!(await store.leases.claim('alerts', instance, Math.max(30_000, 3 * this.intervalMs)))) return;
      const rules = await store.alerts.allRules();
      const tracked = rules.filter((rule) => rule.kind === 'job_open_too_long' || rule.kind === 'station_silent').map((rule) => rule.customer_id);
      await this.jobs.run(new Set([...tracked, ...(await store.alerts.customersTaking(JOB_COMPLETED_MESSAGE_TYPE))]), this.clock());
      // Which gateways are connected, read once a round and only for the rules that ask.
      const connected = rules.some((rule) => rule.kind === 'station_silent') ? await store.presence.connected() : new Map<string, number>();
      for (const rule of rules) {
        if (rule.kind === 'gateway_offline') await this.gatewaysOffline(rule);
        else if (rule.kind === 'device_low_battery') await this.lowBatteries(rule);
        else if (rule.kind === 'job_open_too_long') await jobsOpenTooLong(store, this.writer, rule, this.clock());
        else if (rule.kind === 'station_silent') await stationsSilent(store, this.writer, rule, connected, this.clock());
      }
      await this.connectivity.run(new Set(await store.alerts.customersTaking(CONNECTIVITY_MESSAGE_TYPE)), this.clock());
    } catch (error) {
      this.options.log?.warn({ reason: (error as Error).message }, 'alert rules could not be evaluated; trying again');
    }
  }

  private async gatewaysOffline(rule: AlertRule): Promise<void> {
    const { store } = this.options;
    const afterSeconds = rule.parameters.after_seconds as number;
    const only = rule.parameters.gateway_ids as string[] | undefined;
    const gateways = (await allGateways(store, rule.customer_id)).filter((g) => !only || only.includes(g.id));
    const open = new Map((await store.alerts.openOf(rule.id)).map((alert) => [alert.subject.id, alert]));
    const now = this.clock();
    for (const gateway of gateways) {
      const alert = open.get(gateway.id);
      open.delete(gateway.id);
      const offline = gatewayOffline(gateway.last_message, now, afterSeconds);
      if (offline && !alert) {
        await this.writer.open(rule, { type: 'gateway', id: gateway.id }, { gateway_name: gateway.name, last_message: gateway.last_message, after_seconds: afterSeconds }, now);
      } else if (alert && gateway.last_message !== null && gateway.last_message > (alert.details.last_message as number)) {
        // A message since the alert opened: resolved once (the next opening needs the whole silence again).
        await this.writer.resolve(alert, now);
      }
    }
    // Gateways deleted (or no longer named by the rule) while their alert was open.
    for (const alert of open.values()) await this.writer.resolve(alert, now);
  }

  private async lowBatteries(rule: AlertRule): Promise<void> {
    const { store } = this.options;
    const below = rule.parameters.below_percent as number;
    const now = this.clock();
    const open = new Map((await store.alerts.openOf(rule.id)).map((alert) => [alert.subject.id, alert]));
    let after: string | null = null;
    for (;;) {
      const page = await store.devices.page(rule.customer_id, after, 500, { batteryBelow: below });
      for (const device of page) {
        if (open.has(device.device_id)) continue;
        await this.writer.open(rule, { type: 'device', id: device.device_id }, { battery: device.battery, below_percent: below, last_gateway_id: device.last_gateway_id }, now);
      }
      if (page.length < 500) break;
      after = page[page.length - 1]!.device_id;
    }
    for (const alert of open.values()) {
      const device = await store.devices.byId(rule.customer_id, alert.subject.id);
      if (!device || (device.battery !== null && device.battery >= below + BATTERY_HYSTERESIS)) await this.writer.resolve(alert, now);
    }
  }
}
