import type { RetentionRecord } from '../domain/retention.js';
import type { CustomerApi } from './api.js';

export type { RetentionRecord } from '../domain/retention.js';

const retentionPath = (api: CustomerApi) => `${api.base}/retention`;

/** How long the customer's events are kept, and the last deletion. */
export function getRetention(api: CustomerApi): Promise<RetentionRecord> {
  return api.client.get<RetentionRecord>(retentionPath(api));
}

/** Keeps the customer's events `eventsDays` days (older ones are deleted), or for ever with null. */
export function setRetention(api: CustomerApi, eventsDays: number | null): Promise<RetentionRecord> {
  return api.client.put<RetentionRecord>(retentionPath(api), { events_days: eventsDays });
}
