import { DEFAULT_WEBHOOK_TIMINGS, type WebhookTimings } from '../domain/webhooks.js';
import type { Signal, Store } from '../store/ports/index.js';
import { SharedBatches } from './messages.js';
import { RecentEvents } from './recent-events.js';
import { WebhookSender } from './sender.js';
import { WebhookWorker, type WorkerHost } from './webhook-worker.js';

export interface DelivererOptions {
  store: Store;
  clock?: () => number;
  timings?: Partial<WebhookTimings>;
  allowLoopback?: boolean;
  /** Events per customer kept in memory (default KEPT). */
  keptEvents?: number;
  /** This instance's name in the leases (unique per process). */
  instance: string;
  log?: WorkerHost['log'];
}

/**
 * The webhook deliverer of one instance (docs/webhooks.md "Several instances"): it takes the lease
 * of each enabled webhook it can (PostgreSQL: held by one instance at a time, renewed every
 * leaseRenewMs, taken over leaseMs after its holder stopped renewing) and runs a worker for each
 * one it holds, woken by the commits of its customer's events and by changes of the webhook.
 */
export class WebhookDeliverer {
  private readonly host: WorkerHost;
  private readonly workers = new Map<string, WebhookWorker>();
  private readonly instance: string;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];
  private refreshing: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(options: DelivererOptions) {
    const timings = { ...DEFAULT_WEBHOOK_TIMINGS, ...options.timings };
    this.instance = options.instance;
    this.host = {
      store: options.store,
      sender: new WebhookSender({ allowLoopback: options.allowLoopback ?? false, timeoutMs: timings.timeoutMs }),
      events: new RecentEvents(options.store.eventLog, options.keptEvents),
      batches: new SharedBatches(),
      clock: options.clock ?? Date.now,
      timings,
      random: Math.random,
      log: options.log ?? { warn: () => undefined, info: () => undefined },
    };
  }

  start(): void {
    const { store } = this.host;
    this.unsubscribe.push(store.signals.subscribe((signal) => this.heard(signal)));
    this.unsubscribe.push(
      store.signals.onResume(() => {
        this.host.events.committedElsewhere();
        this.refresh();
      }),
    );
    this.timer = setInterval(() => this.refresh(), this.host.timings.leaseRenewMs);
    this.timer.unref();
    this.refresh();
  }

  /** Stops every worker (an attempt in flight is cut off and stays pending) and gives the leases up. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const stop of this.unsubscribe) stop();
    await this.refreshing;
    const ids = [...this.workers.keys()];
    await Promise.all([...this.workers.values()].map((worker) => worker.stop()));
    this.workers.clear();
    await Promise.all(ids.map((id) => this.host.store.leases.release(leaseName(id), this.instance).catch(() => undefined)));
    this.host.sender.close();
  }

  /**
   * Whether this instance delivers a webhook that follows the newest events: commits then hand
   * their events over (`events-committed` with `committed`).
   */
  get following(): boolean {
    return this.workers.size > 0 && this.host.events.wanted;
  }

  private heard(signal: Signal): void {
    if (signal.kind === 'events-committed') {
      // Before the workers wake: a caught-up one then finds the commit's events in memory.
      if (signal.committed) this.host.events.committed(signal.committed);
      else this.host.events.committedElsewhere(signal.customers);
      const customers = new Set(signal.customers);
      for (const worker of this.workers.values()) if (customers.has(worker.customerId)) worker.wake(signal.through);
    } else if (signal.kind === 'webhook-changed') {
      this.workers.get(signal.webhook_id)?.webhookChanged();
      this.refresh();
    }
  }

  /** Takes or renews the leases of the enabled webhooks, starts the workers of those held and stops the others. */
  private refresh(): void {
    if (this.closed) return;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = this.reconcile()
      .catch((error: Error) => this.host.log.warn({ reason: error.message }, 'webhook leases could not be renewed; trying again'))
      .finally(() => {
        this.refreshing = undefined;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private async reconcile(): Promise<void> {
    const { store, timings } = this.host;
    const enabled = await store.webhooks.enabled();
    const wanted = new Set<string>();
    for (const webhook of enabled) {
      if (this.closed) return;
      if (!(await store.leases.claim(leaseName(webhook.id), this.instance, timings.leaseMs))) continue;
      wanted.add(webhook.id);
      if (!this.workers.has(webhook.id)) this.workers.set(webhook.id, new WebhookWorker(this.host, webhook.customer_id, webhook.id));
    }
    for (const [id, worker] of this.workers) {
      if (wanted.has(id)) continue;
      this.workers.delete(id);
      await worker.stop();
      await store.leases.release(leaseName(id), this.instance);
      if (![...this.workers.values()].some((w) => w.customerId === worker.customerId)) this.host.events.drop(worker.customerId);
    }
  }
}

const leaseName = (webhookId: string) => `webhook:${webhookId}`;
