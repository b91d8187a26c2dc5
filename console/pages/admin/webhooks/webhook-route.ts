/** The Webhooks section's routes: the list, and one webhook (its actions and deliveries) by its id in the query. */
export const WEBHOOKS_ROUTE = '#/admin/webhooks';

export const webhookRoute = (id: string) => `${WEBHOOKS_ROUTE}?webhook=${encodeURIComponent(id)}`;
