import { Readable } from 'node:stream';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { EventItems } from '../store/event-json.js';

const OPEN = Buffer.from('{"items":[');
const SEPARATOR = Buffer.from(',');
const EMPTY = Buffer.alloc(0);

/** Rows read per step of a streamed list: about 200 KB of JSON. */
export const STREAM_CHUNK_ROWS = 500;

/** Reads up to `limit` events before the key, newest first. */
export type ReadBefore = (before: CreatedIdKey, limit: number) => EventItems;

/**
 * The list wrapper (spec 2.3) written incrementally: `{"items":[` then events a chunk at a
 * time, then `links` and `metadata`, where `metadata.size` is the number of items written.
 * Each chunk is its own keyset query rather than one open statement iterator: better-sqlite3
 * keeps the connection busy while an iterator is open, which would stall every other request
 * and ingest while a slow client reads. Backpressure: a chunk is read only when the socket
 * has taken the previous one, so memory stays flat whatever the count.
 */
export class EventListStream extends Readable {
  private before: CreatedIdKey;
  private size = 0;
  private started = false;
  private finished = false;

  constructor(
    private readonly readEvents: ReadBefore,
    first: CreatedIdKey,
    private readonly metadata: (size: number) => object,
  ) {
    super();
    this.before = first;
  }

  override _read(): void {
    try {
      while (!this.finished) {
        const items = this.readEvents(this.before, STREAM_CHUNK_ROWS);
        const parts = [this.started ? (items.count > 0 && this.size > 0 ? SEPARATOR : EMPTY) : OPEN, items.json];
        this.started = true;
        this.size += items.count;
        if (items.more && items.last) {
          this.before = items.last;
        } else {
          parts.push(Buffer.from(`],"links":{},"metadata":${JSON.stringify(this.metadata(this.size))}}`));
          this.finished = true;
        }
        if (!this.push(Buffer.concat(parts))) return;
      }
      this.push(null);
    } catch (error) {
      this.destroy(new Error('reading events for a streamed list failed', { cause: error }));
    }
  }
}
