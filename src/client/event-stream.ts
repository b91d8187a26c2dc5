import { StringDecoder } from 'node:string_decoder';
import { SseLines, type StreamItem } from '../domain/sse.js';
import { NetworkError, type ApiClient } from './api.js';

export type { StreamItem };

/**
 * A reader of Server-Sent Events (the WHATWG "event stream" format) for the live event stream,
 * `GET /{customer_id}/events/stream`: its events and its comments (which say why the server ended
 * a stream, and where to resume).
 */

/** Splits the bytes of an event stream into events and comments, however the bytes are cut (even inside a character). */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private readonly lines = new SseLines();

  /** The items completed by this chunk. */
  push(chunk: Buffer | string): StreamItem[] {
    return this.lines.push(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }
}

/**
 * The items of one connection to an event stream, until the server ends it. A connection lost
 * midway ends the iteration with NetworkError, like one that could not be made.
 */
export async function* readEventStream(
  client: ApiClient,
  path: string,
  options: { query?: Record<string, string | undefined>; lastEventId?: string; signal?: AbortSignal } = {},
): AsyncGenerator<StreamItem> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const body = await client.openStream(path, { query: options.query, headers, signal: options.signal });
  const parser = new SseParser();
  try {
    for await (const chunk of body) yield* parser.push(chunk);
  } catch (cause) {
    if (options.signal?.aborted) return;
    throw new NetworkError(client.baseUrl, cause);
  }
}
