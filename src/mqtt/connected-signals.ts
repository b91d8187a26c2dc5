import type { Store } from '../store/ports/index.js';
import type { IngestLog } from './ingest.js';

/** Gateway ids per `gateways-connected` signal: 150 ids of 36 characters stay well within NOTIFY's 8,000 bytes. */
const CONNECTED_PER_SIGNAL = 150;

/**
 * Tells the other instances which gateways connected here, coalesced: the connections of one
 * turn of the event loop (a reconnect storm brings hundreds) go out as one signal per 150.
 */
export class ConnectedSignals {
  private pending: string[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly instance: string,
    private readonly signals: Store['signals'],
    private readonly log: IngestLog,
  ) {}

  add(gatewayId: string): void {
    if (this.closed) return;
    this.pending.push(gatewayId);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  close(): void {
    this.closed = true;
  }

  private flush(): void {
    this.scheduled = false;
    const ids = this.pending;
    this.pending = [];
    for (let i = 0; i < ids.length; i += CONNECTED_PER_SIGNAL) {
      const gatewayIds = ids.slice(i, i + CONNECTED_PER_SIGNAL);
      this.signals.publish({ kind: 'gateways-connected', instance: this.instance, gateway_ids: gatewayIds }).catch((error: Error) => {
        // The database is down: other instances will not close their older connections of these
        // gateways; those die with their TCP keepalive or the gateway's own reconnect.
        this.log.warn({ gateways: gatewayIds.length, reason: error.message }, 'could not tell other instances which gateways connected here');
      });
    }
  }
}
