import { SseLines, type StreamItem } from '../../src/domain/sse';
import { send } from './api';

export type { StreamItem };

/**
 * Reads one connection to an event stream with `fetch` (EventSource cannot send the token in a
 * header), handing over the items of each chunk as it arrives, until the server ends the stream
 * or `signal` aborts it (`onOpen` once the server accepted it). A refusal before the stream starts throws the API's error.
 */
export async function readEventStream(
  path: string,
  options: { lastEventId?: string; signal: AbortSignal; onOpen?: () => void; onItems: (items: StreamItem[]) => void },
): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const response = await send('GET', path, { headers, signal: options.signal });
  options.onOpen?.();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const lines = new SseLines();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const items = lines.push(value);
      if (items.length > 0) options.onItems(items);
    }
  } finally {
    reader.releaseLock();
  }
}
