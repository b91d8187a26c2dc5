import { Readable } from 'node:stream';
import type { CreatedIdKey } from '../domain/page-token.js';
import { withText } from './event-text.js';
import type { EventItems } from '../store/ports/index.js';

/** Rows read per step of a streamed list: a page's worth of JSON held at a time. */
export const STREAM_CHUNK_ROWS = 500;

/** Reads up to `limit` events before the key, newest first, their JSON after `prefix`. */
export type ReadBefore = (before: CreatedIdKey, limit: number, prefix: string) => Promise<EventItems>;

/**
 * The list wrapper (docs/http.md "Lists") written a chunk at a time, `metadata` last so that its
 * `size` counts the items written. Each chunk is its own keyset query: an open better-sqlite3
 * iterator would hold the connection, and with it every request and ingest, while a slow client
 * reads. A chunk is read only when the socket took the previous one (docs/events.md "GET
 * /{customer_id}/events").
 */
export class EventListStream extends Readable {
  private before: CreatedIdKey;
  private size = 0;
  private started = false;
  private finished = false;
  private reading = false;

  constructor(
    private readonly readEvents: ReadBefore,
    first: CreatedIdKey,
    private readonly metadata: (size: number) => object,
  ) {
    super();
    this.before = first;
  }

  override _read(): void {
    // One read at a time: the stream asks again while a chunk is on its way.
    if (this.reading) return;
    this.reading = true;
    void this.readChunks();
  }

  /** Reads and pushes chunks until the socket has enough or the list ends (one await per chunk). */
  private async readChunks(): Promise<void> {
    try {
      while (!this.finished) {
        // Only a chunk that follows items needs a comma.
        const prefix = this.size === 0 ? (this.started ? '' : '{"items":[') : ',';
        let items = await this.readEvents(this.before, STREAM_CHUNK_ROWS, prefix);
        // Events removed since the previous chunk (no code deletes them today) leave it empty: no comma then.
        if (items.count === 0 && prefix === ',') items = { ...items, json: items.json.subarray(1) };
        this.started = true;
        this.size += items.count;
        let chunk = items.json;
        if (items.more && items.last) {
          this.before = items.last;
        } else {
          chunk = withText(items, `],"links":{},"metadata":${JSON.stringify(this.metadata(this.size))}}`);
          this.finished = true;
        }
        if (!this.push(chunk)) {
          this.reading = false;
          return;
        }
      }
      this.push(null);
    } catch (error) {
      this.destroy(new Error('reading events for a streamed list failed', { cause: error }));
    }
    this.reading = false;
  }
}
