import type { GatewayRecord, Store } from '../store/ports/index.js';

/** Every live gateway of the customer. */
export async function allGateways(store: Pick<Store, 'gateways'>, customerId: string): Promise<GatewayRecord[]> {
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
