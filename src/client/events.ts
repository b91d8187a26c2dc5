import type { EVENT_COLUMNS } from '../domain/events.js';
import type { CustomerApi, List } from './api.js';
import { readEventStream, type StreamItem } from './event-stream.js';

/** An event as the API returns it; absent fields are left out. */
export type ApiEvent = { id: string; created: number; type: string } & Partial<Record<(typeof EVENT_COLUMNS)[number], string | number>>;

/** A list response of the events call (docs/http.md "Lists"). */
export interface EventPage extends List<ApiEvent> {
  metadata: { description: string; size: number; filters: { name: string; value: unknown }[] };
}

/** A range of events in milliseconds; bounds left out are the server's (the last 24 hours). */
export interface EventRange {
  start_time_millis?: number;
  end_time_millis?: number;
}

/** The query of the event list. */
export interface EventQuery extends EventRange {
  gateway_id?: string;
  limit?: number;
}

/** The first page of the customer's events in the range, newest first. */
export function listEvents(api: CustomerApi, query: EventQuery): Promise<EventPage> {
  return api.client.get<EventPage>(`${api.base}/events`, { ...query });
}

/**
 * The items of one connection to the live event stream (`GET /{customer_id}/events/stream`),
 * from after `lastEventId` when given, until the server ends it.
 */
export function streamEvents(
  api: CustomerApi,
  options: { gatewayId?: string; lastEventId?: string; signal?: AbortSignal },
): AsyncGenerator<StreamItem> {
  return readEventStream(api.client, `${api.base}/events/stream`, { query: { gateway_id: options.gatewayId }, lastEventId: options.lastEventId, signal: options.signal });
}
