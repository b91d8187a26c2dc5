import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { SseParser, type StreamItem } from '../../src/client/event-stream.js';

/** An event of the stream: its id and parsed data. */
export interface StreamEvent {
  id: string;
  data: string;
}

/** One HTTP connection to `GET /{customer}/events/stream`, read as a client would (node:http, so that a test can stop reading). */
export interface SseConnection {
  status: number;
  headers: IncomingMessage['headers'];
  /** Everything received so far, in order. */
  items: StreamItem[];
  /** The events received so far. */
  events(): StreamEvent[];
  /** The comments received so far. */
  comments(): string[];
  /** Resolves once `ok(items)` holds (checked on each chunk), rejecting after `timeoutMs` with what arrived. */
  until(ok: (connection: SseConnection) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the events once `count` have arrived. */
  eventCount(count: number): Promise<StreamEvent[]>;
  /** Resolves when the server ended the response (or the connection closed). */
  ended: Promise<void>;
  /** The body of a refusal (status >= 300), parsed. */
  body: unknown;
  /** Stops reading from the socket (the kernel's buffers fill, then the server's). */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens the stream (an optional query string and Last-Event-ID) with the token. */
export function openSse(
  base: string,
  path: string,
  options: { token?: string; lastEventId?: string; headers?: Record<string, string>; paused?: boolean } = {},
): Promise<SseConnection> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(base + path, { headers, agent: false });
    outgoing.once('error', reject);
    outgoing.once('response', (response) => {
      const parser = new SseParser();
      const waiters = new Set<() => void>();
      let text = '';
      let endedResolve!: () => void;
      const ended = new Promise<void>((done) => (endedResolve = done));
      let finished = false;
      const settle = () => {
        finished = true;
        endedResolve();
        for (const waiter of [...waiters]) waiter();
      };
      response.once('end', settle);
      response.once('close', settle);
      response.once('error', settle);
      const connection: SseConnection = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        items: [],
        events: () => connection.items.filter((item) => item.kind === 'event').map((item) => ({ id: item.id!, data: item.data })),
        comments: () => connection.items.filter((item) => item.kind === 'comment').map((item) => item.text),
        until: (ok, what, timeoutMs = 20_000) =>
          new Promise<void>((done, fail) => {
            const check = () => {
              if (ok(connection)) {
                waiters.delete(check);
                clearTimeout(timer);
                done();
              } else if (finished) {
                waiters.delete(check);
                clearTimeout(timer);
                fail(new Error(`the stream ended before ${what}; received ${received()}`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no ${what} within ${timeoutMs} ms; received ${received()}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        eventCount: async (count) => {
          await connection.until((c) => c.events().length >= count, `${count} events`);
          return connection.events();
        },
        ended,
        body: undefined,
        pause: () => (response.socket as Socket).pause(),
        resume: () => (response.socket as Socket).resume(),
        close: () => outgoing.destroy(),
      };
      const received = () => {
        const comments = connection.comments();
        const beats = comments.filter((text) => text === 'heartbeat').length;
        return `${connection.events().length} events, ${beats} heartbeats and the comments ${JSON.stringify(comments.filter((text) => text !== 'heartbeat'))}`;
      };
      response.on('data', (chunk: Buffer) => {
        if (connection.status >= 300) {
          text += chunk.toString();
          return;
        }
        connection.items.push(...parser.push(chunk));
        for (const waiter of [...waiters]) waiter();
      });
      if (connection.status >= 300) {
        response.once('end', () => {
          try {
            connection.body = JSON.parse(text);
          } catch {
            connection.body = text;
          }
          resolve(connection);
        });
        return;
      }
      if (options.paused) connection.pause();
      resolve(connection);
    });
    outgoing.end();
  });
}
