import { randomUUID } from 'node:crypto';
import { BATTERY_HYSTERESIS, DEFAULT_ALERT_INTERVAL_MS, alertView, gatewayOffline } from '../domain/alerts.js';
import type { AlertRecord, AlertRule, GatewayRecord, Store } from '../store/ports/index.js';

export interface EvaluatorOptions {
  store: Store;
  clock?: () => number;
  intervalMs?: number;
  /** This instance's name in the lease (unique per process). */
  instance: string;
  log?: { warn(fields: object, message: string): void };
}

/** The `data` of an alert's webhook message. */
const messageOf = (alert: AlertRecord) => JSON.stringify(alertView(alert));

/**
 * Evaluates the alert rules every intervalMs on one instance at a time (the lease `alerts`; on
 * SQLite the one process): opens an alert once per rule and subject while its condition holds and
 * resolves it once when it clears, queuing the webhook messages in the same transactions
 * (docs/alerts.md). This version evaluates `gateway_offline`.
 */
export class AlertEvaluator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly clock: () => number;
  private readonly intervalMs: number;

  constructor(private readonly options: EvaluatorOptions) {
    this.clock = options.clock ?? Date.now;
    this.intervalMs = options.intervalMs ?? DEFAULT_ALERT_INTERVAL_MS;
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
      for (const rule of await store.alerts.allRules()) {
        if (rule.kind === 'gateway_offline') await this.gatewaysOffline(rule);
        else if (rule.kind === 'device_low_battery') await this.lowBatteries(rule);
      }
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
        const opened: AlertRecord = {
          id: randomUUID(),
          customer_id: rule.customer_id,
          rule_id: rule.id,
          kind: rule.kind,
          subject: { type: 'gateway', id: gateway.id },
          state: 'OPEN',
          opened: now,
          resolved: null,
          details: { gateway_name: gateway.name, last_message: gateway.last_message, after_seconds: afterSeconds },
        };
        await this.told(await store.alerts.open(opened, messageOf(opened)), opened);
      } else if (alert && gateway.last_message !== null && gateway.last_message > (alert.details.last_message as number)) {
        // A message since the alert opened: resolved once (the next opening needs the whole silence again).
        await this.resolve(alert, now);
      }
    }
    // Gateways deleted (or no longer named by the rule) while their alert was open.
    for (const alert of open.values()) await this.resolve(alert, now);
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
        const opened: AlertRecord = {
          id: randomUUID(),
          customer_id: rule.customer_id,
          rule_id: rule.id,
          kind: rule.kind,
          subject: { type: 'device', id: device.device_id },
          state: 'OPEN',
          opened: now,
          resolved: null,
          details: { battery: device.battery, below_percent: below, last_gateway_id: device.last_gateway_id },
        };
        await this.told(await store.alerts.open(opened, messageOf(opened)), opened);
      }
      if (page.length < 500) break;
      after = page[page.length - 1]!.device_id;
    }
    for (const alert of open.values()) {
      const device = await store.devices.byId(rule.customer_id, alert.subject.id);
      if (!device || (device.battery !== null && device.battery >= below + BATTERY_HYSTERESIS)) await this.resolve(alert, now);
    }
  }

  private async resolve(alert: AlertRecord, now: number): Promise<void> {
    let resolved: AlertRecord | undefined;
    const told = await this.options.store.alerts.resolve(alert, now, (record) => messageOf((resolved = record)));
    await this.told(told, resolved);
  }

  /**
   * After an alert opened or resolved (`webhookIds` undefined: it did not, another instance or round
   * did): wakes whoever delivers the webhooks that got its message, and tells the live streams.
   */
  private async told(webhookIds: string[] | undefined, alert: AlertRecord | undefined): Promise<void> {
    if (!webhookIds || !alert) return;
    const { signals } = this.options.store;
    for (const id of webhookIds) await signals.publish({ kind: 'webhook-changed', webhook_id: id });
    await signals.publish({ kind: 'alert-changed', customer_id: alert.customer_id, alert: alertView(alert) });
  }
}

async function allGateways(store: Store, customerId: string): Promise<GatewayRecord[]> {
  const all: GatewayRecord[] = [];
  let after: { created: number; id: string } | null = null;
  for (;;) {
    const page = await store.gateways.page(customerId, after, 500);
    all.push(...page);
    if (page.length < 500) return all;
    const last = page[page.length - 1]!;
    after = { created: last.created, id: last.id };
  }
}
