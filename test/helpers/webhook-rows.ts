import { randomUUID } from 'node:crypto';
import type { NewDelivery, Store } from '../../src/store/ports/index.js';

/** A new customer with one webhook (event.scan, cursor at the start) in the store, through its seam; and batch deliveries of that webhook. */
export async function webhookOfNewCustomer(store: Store): Promise<{ customerId: string; webhookId: string; batch: (from: number, upto: number) => NewDelivery }> {
  const customerId = randomUUID();
  await store.customers.createWithAdmin(customerId, { id: randomUUID(), customer_id: customerId, email: 'a@example.com', roles: ['ADMIN_ROLE'], created: 0 }, 0);
  const webhookId = randomUUID();
  await store.webhooks.create({
    id: webhookId, customer_id: customerId, url: 'https://example.com/hook', event_types: ['event.scan'], description: '', enabled: true,
    secret: 'whsec_c2VjcmV0', previous_secret: null, previous_until: null, created: 0, last_updated: 0, cursor: [0], failing_since: null, disabled_reason: null,
  });
  const batch = (from: number, upto: number): NewDelivery => ({ id: randomUUID(), webhook_id: webhookId, customer_id: customerId, type: 'event.batch', created: 1, from: [from], upto: [upto], payload: null });
  return { customerId, webhookId, batch };
}
