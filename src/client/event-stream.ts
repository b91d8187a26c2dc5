import { StringDecoder } from 'node:string_decoder';
import { NetworkError, type ApiClient } from './api.js';

/**
 * A reader of Server-Sent Events (the WHATWG "event stream" format) for the live event stream,
 * `GET /{customer_id}/events/stream`: its events and its comments (which say why the server ended
 * a stream, and where to resume).
 */

/** A dispatched event, or a comment line (its text after `:` and one space). */
export type StreamItem = { kind: 'event'; id: string | undefined; event: string | undefined; data: string } | { kind: 'comment'; text: string };

/** Splits the bytes of an event stream into events and comments, however the bytes are cut. */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private data: string[] = [];
  private id: string | undefined;
  private event: string | undefined;
  /** A CR ended the last chunk: an LF that starts the next one belongs to it. */
  private pendingCr = false;

  /** The items completed by this chunk. */
  push(chunk: Buffer | string): StreamItem[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const items: StreamItem[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      if (end < 0) break;
      const crlf = this.buffer.startsWith('\r\n', end);
      if (this.buffer[end] === '\r' && !crlf && end === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (crlf ? 2 : 1));
      this.line(line, items);
    }
    return items;
  }

  private line(line: string, items: StreamItem[]): void {
    if (line === '') {
      // A blank line dispatches the event gathered so far, if it has data.
      if (this.data.length > 0) items.push({ kind: 'event', id: this.id, event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.id = undefined;
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) {
      items.push({ kind: 'comment', text: line.slice(line.startsWith(': ') ? 2 : 1) });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'event') this.event = value;
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
