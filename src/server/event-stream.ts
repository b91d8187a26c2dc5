import { Readable } from 'node:stream';
import type { CreatedIdKey } from '../domain/page-token.js';
import { apiEventOf, keyOf, type RawEvent } from '../store/events.js';

/** Rows read per step of a streamed list: about 200 KB of JSON. */
export const STREAM_CHUNK_ROWS = 500;

/** Reads up to `limit` events before the key, newest first. */
export type ReadBefore = (before: CreatedIdKey, limit: number) => RawEvent[];

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
        const rows = this.readEvents(this.before, STREAM_CHUNK_ROWS);
        let text = this.started ? '' : '{"items":[';
        this.started = true;
        for (const row of rows) text += (this.size++ === 0 ? '' : ',') + JSON.stringify(apiEventOf(row));
        if (rows.length < STREAM_CHUNK_ROWS) {
          text += `],"links":{},"metadata":${JSON.stringify(this.metadata(this.size))}}`;
          this.finished = true;
        } else {
          this.before = keyOf(rows[rows.length - 1]!);
        }
        if (!this.push(text)) return;
      }
      this.push(null);
    } catch (error) {
      this.destroy(new Error('reading events for a streamed list failed', { cause: error }));
    }
  }
}
