import type { Store } from '../store/ports/index.js';
import type { IngestLog } from './ingest.js';

/** How often a change of this instance's connections is published: a reconnect storm's thousands make a few writes. */
export const PRESENCE_INTERVAL_MS = 2_000;
/** How long a publication counts without renewal: an instance killed stops counting within this. */
export const PRESENCE_TTL_MS = 30_000;

/**
 * Publishes the gateways connected to this instance, and since when, to the store's presence
 * (docs/alerts.md "station_silent"): at most every PRESENCE_INTERVAL_MS when they changed, and
 * renewed a third of PRESENCE_TTL_MS after the last publication when they did not.
 */
export class PresencePublisher {
  private readonly since = new Map<string, number>();
  private changed = true;
  private publishedAt = -Infinity;
  private publishing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly instance: string,
    private readonly presence: Store['presence'],
    private readonly clock: () => number,
    private readonly log: IngestLog,
  ) {
    this.timer = setInterval(() => this.tick(), PRESENCE_INTERVAL_MS);
    this.timer.unref();
    this.tick();
  }

  connected(gatewayId: string): void {
    this.since.set(gatewayId, this.clock());
    this.changed = true;
  }

  disconnected(gatewayId: string): void {
    this.changed = this.since.delete(gatewayId) || this.changed;
  }

  /** Stops publishing and withdraws this instance's connections. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.publishing;
    await this.presence.withdraw(this.instance).catch(() => undefined);
  }

  private tick(): void {
    if (this.publishing || (!this.changed && performance.now() - this.publishedAt < PRESENCE_TTL_MS / 3)) return;
    this.changed = false;
    const started = performance.now();
    this.publishing = this.presence
      .publish(this.instance, this.since, PRESENCE_TTL_MS)
      .then(
        () => void (this.publishedAt = started),
        (error: Error) => {
          // Tried again at the next tick; meanwhile station_silent sees the connections published before.
          this.changed = true;
          this.log.warn({ reason: error.message }, 'could not publish which gateways are connected here');
        },
      )
      .finally(() => (this.publishing = undefined));
  }
}
