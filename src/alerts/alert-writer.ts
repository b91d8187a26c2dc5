import { randomUUID } from 'node:crypto';
import { alertView } from '../domain/alerts.js';
import type { AlertRecord, AlertRule, Store } from '../store/ports/index.js';

/** The `data` of an alert's webhook message. */
const messageOf = (alert: AlertRecord) => JSON.stringify(alertView(alert));

/**
 * Opens and resolves alerts for the evaluator's kinds: each at most once (the store's partial
 * unique index and its `state = 'OPEN'` check decide, whichever instance tries), with the webhook
 * messages queued in the same transaction, then wakes their deliverers and the live streams.
 */
export class AlertWriter {
  constructor(private readonly store: Pick<Store, 'alerts' | 'signals'>) {}

  /** Opens the rule's alert on the subject at `now`, unless one is open. */
  async open(rule: AlertRule, subject: AlertRecord['subject'], details: Record<string, unknown>, now: number): Promise<void> {
    const opened: AlertRecord = { id: randomUUID(), customer_id: rule.customer_id, rule_id: rule.id, kind: rule.kind, subject, state: 'OPEN', opened: now, resolved: null, details };
    await this.told(await this.store.alerts.open(opened, messageOf(opened)), opened);
  }

  async resolve(alert: AlertRecord, now: number): Promise<void> {
    let resolved: AlertRecord | undefined;
    const told = await this.store.alerts.resolve(alert, now, (record) => messageOf((resolved = record)));
    await this.told(told, resolved);
  }

  /** Wakes whoever delivers the webhooks that got a message (none when `webhookIds` is empty). */
  async wake(webhookIds: readonly string[]): Promise<void> {
    for (const id of webhookIds) await this.store.signals.publish({ kind: 'webhook-changed', webhook_id: id });
  }

  /**
   * After an alert opened or resolved (`webhookIds` undefined: it did not, another instance or round
   * did): wakes whoever delivers the webhooks that got its message, and tells the live streams.
   */
  private async told(webhookIds: string[] | undefined, alert: AlertRecord | undefined): Promise<void> {
    if (!webhookIds || !alert) return;
    await this.wake(webhookIds);
    await this.store.signals.publish({ kind: 'alert-changed', customer_id: alert.customer_id, alert: alertView(alert) });
  }
}
