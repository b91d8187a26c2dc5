import { ApiError } from './api';
import { readEventStream, type StreamItem } from './event-stream';

/** Waits before connecting again after a failure: at once for the first, then longer. */
export const RETRY_MS = [250, 1000, 2000, 5000];

export interface FollowOptions {
  signal: AbortSignal;
  /** The id to resume after (`Last-Event-ID`), read at each connection. */
  lastEventId?: () => string | undefined;
  /** The server accepted a connection: the stream is live. */
  onOpen: () => void;
  onItems: (items: StreamItem[]) => void;
  /**
   * The connection ended: `failure` undefined when the server ended it (shutting down, or this
   * reader fell behind), else why it failed. `final` when following stops (401: the session
   * ended; 403: the role lost the permission); otherwise it reconnects.
   */
  onBreak: (failure: unknown, final: boolean) => void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Follows an event stream until `signal` aborts: reconnects at once when the server ends it, and
 * after 0.25, 1, 2, then every 5 s after a failure (network, 429), so that a page left open
 * comes back by itself after a restart of the server.
 */
export async function followEventStream(path: string, options: FollowOptions): Promise<void> {
  const { signal } = options;
  for (let failures = 0; !signal.aborted; ) {
    try {
      await readEventStream(path, { lastEventId: options.lastEventId?.(), signal, onOpen: options.onOpen, onItems: options.onItems });
      failures = 0;
      options.onBreak(undefined, false);
    } catch (failure) {
      if (signal.aborted) return;
      const final = failure instanceof ApiError && (failure.status === 401 || failure.status === 403);
      options.onBreak(failure, final);
      if (final) return;
    }
    await sleep(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]!, signal);
  }
}
