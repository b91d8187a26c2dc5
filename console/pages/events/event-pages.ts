import type { ApiEvent, EventPage } from '../../../src/client/events';
import { api, customerPath, send } from '../../lib/api';
import { StreamedItems } from './streamed-items';

/** Rows of one page of the Events page. */
export const EVENTS_PAGE_SIZE = 50;

/** What the page lists: `start <= created < end`, of one gateway or (empty) all. */
export interface EventsQuery {
  start: number;
  end: number;
  gatewayId: string;
}

/**
 * Where a page starts: the first of the range, the API's `links.next` (a keyset token), or just
 * after an event (the gateway's list has no pages: the page keeps its own key, `created` and `id`).
 */
export type PageStart = { kind: 'first' } | { kind: 'link'; path: string } | { kind: 'after'; created: number; id: string };

export interface EventsPage {
  items: ApiEvent[];
  /** The next page's start; undefined on the last page. */
  next: PageStart | undefined;
}

/** The API's order, newest first: whether `event` comes after the key (older, or as old with a smaller id). */
const after = (event: ApiEvent, key: { created: number; id: string }) => event.created < key.created || (event.created === key.created && event.id < key.id);

/** One page of the customer's events (docs/events.md "GET /{customer_id}/events"). */
export async function readEventsPage(query: EventsQuery, start: PageStart, signal?: AbortSignal): Promise<EventsPage> {
  if (query.gatewayId) return readGatewayPage(query, start, signal);
  const path =
    start.kind === 'link' ? start.path : `${customerPath('/events')}?start_time_millis=${query.start}&end_time_millis=${query.end}&limit=${EVENTS_PAGE_SIZE}`;
  const page = await api.get<EventPage>(path, { signal });
  return { items: page.items, next: page.links.next ? { kind: 'link', path: page.links.next } : undefined };
}

/**
 * A page of one gateway's events. The API streams that list whole, however long the range: the
 * page reads the answer as it arrives and stops it after one event more than a page (which says
 * whether another page follows). A later page asks for the range up to its key's millisecond and
 * skips the events of that millisecond up to the key.
 */
async function readGatewayPage(query: EventsQuery, start: PageStart, signal?: AbortSignal): Promise<EventsPage> {
  const key = start.kind === 'after' ? start : undefined;
  const end = key ? key.created + 1 : query.end;
  const path = `${customerPath('/events')}?gateway_id=${encodeURIComponent(query.gatewayId)}&start_time_millis=${query.start}&end_time_millis=${end}`;
  const reading = new AbortController();
  const stop = () => reading.abort();
  signal?.addEventListener('abort', stop);
  try {
    const response = await send('GET', path, { signal: reading.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const list = new StreamedItems<ApiEvent>();
    const items: ApiEvent[] = [];
    while (items.length <= EVENTS_PAGE_SIZE && !list.ended) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of list.push(value)) if (!key || after(event, key)) items.push(event);
    }
    const more = items.length > EVENTS_PAGE_SIZE;
    items.length = Math.min(items.length, EVENTS_PAGE_SIZE);
    const last = items[items.length - 1];
    return { items, next: more && last ? { kind: 'after', created: last.created, id: last.id } : undefined };
  } finally {
    // The rest of the range is not wanted: closing the answer stops the server reading it.
    stop();
    signal?.removeEventListener('abort', stop);
  }
}
