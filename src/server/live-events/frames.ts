import type { FastifyBaseLogger } from 'fastify';
import { encodeCursor, type StreamPosition } from '../../domain/stream-cursor.js';
import type { CommittedEvent, Store } from '../../store/ports/index.js';

// What the hubs and streams of live events (live-events.ts) share: their options, what they read
// with, and the Server-Sent Events frames they send.

export interface LiveEventOptions {
  /** Time between heartbeat comments (and credential re-checks) of a stream. */
  heartbeatMs: number;
  /**
   * Bytes a stream may hold for a client that does not read: when more still wait as the next
   * events come, it is cut off. A stream so holds at most this plus one read (readLimit events).
   */
  bufferBytes: number;
  /** How long a cut-off (or shut-down) stream's last bytes may take to reach its client before the connection is closed. */
  lingerMs: number;
  /** Events per read of the store. */
  readLimit: number;
}

export const DEFAULT_LIVE_EVENT_OPTIONS: LiveEventOptions = {
  heartbeatMs: 15_000,
  bufferBytes: 1024 * 1024,
  lingerMs: 10_000,
  readLimit: 500,
};

/** Waits before reading again while a commit announced is not readable yet, or the store failed; the last repeats. */
export const RETRY_DELAYS_MS = [5, 10, 25, 50, 100, 250, 500, 1_000];

/** What hubs and streams read with: the store, the cursor key, the options, the log of their server's live events. */
export interface LiveEventReader {
  readonly store: Store;
  readonly key: Buffer;
  readonly options: LiveEventOptions;
  readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
}

/** An event as streams send it: the frame is made once per hub and shared by its streams. */
export interface LiveEvent {
  position: StreamPosition;
  gatewayId: string | null;
  frame: string;
}

/** The events of one read of a hub, and their frames joined (UTF-8). */
export interface LiveBatch {
  events: readonly LiveEvent[];
  bytes: Buffer;
}

/** The SSE frame of an event: its cursor as `id:`, its JSON as `data:` (JSON text has no line breaks). */
export function frameOf(key: Buffer, customerId: string, event: CommittedEvent): LiveEvent {
  return { position: event.position, gatewayId: event.gatewayId, frame: `id: ${encodeCursor(key, customerId, event.position)}\ndata: ${event.json}\n\n` };
}

/** The `id:` of a frame. */
export function cursorOf(event: LiveEvent): string {
  return event.frame.slice(4, event.frame.indexOf('\n'));
}
