import { connectivityStatus } from '../domain/connectivity.js';
import type { Store } from '../store/ports/index.js';
import type { AlertWriter } from './alert-writer.js';
import { allGateways } from './gateways.js';

/**
 * The `gateway.connectivity` messages (docs/alerts.md "Connectivity"), run by the evaluator under
 * its lease: for each customer with a webhook that takes them, each gateway's `connectivity_status`
 * as GET /gateways shows it now is compared with the one last recorded; a change is recorded and
 * its message queued in one transaction that first checks the recorded one is still the one read,
 * so an instance that takes over sends neither a change twice nor misses one. The first look at a
 * gateway records its status without a message.
 */
export class ConnectivityWatcher {
  constructor(
    private readonly store: Pick<Store, 'alerts' | 'gateways'>,
    private readonly writer: AlertWriter,
  ) {}

  async run(customers: ReadonlySet<string>, now: number): Promise<void> {
    for (const customerId of customers) {
      const recorded = await this.store.alerts.connectivity(customerId);
      for (const gateway of await allGateways(this.store, customerId)) {
        const connectivity = connectivityStatus(gateway, now);
        const before = recorded[gateway.id] ?? null;
        if (before === connectivity) continue;
        const message = before === null ? null : JSON.stringify({ gateway_id: gateway.id, name: gateway.name, connectivity, changed_at: now });
        const told = await this.store.alerts.recordConnectivity(customerId, gateway.id, before, connectivity, now, message);
        if (told) await this.writer.wake(told);
      }
    }
  }
}
