import type { CommittedEvents } from '../../domain/ingest.js';
import { STORED_EVENT_COLUMNS } from '../../domain/events.js';
import type { CommittedEvent } from '../ports/index.js';
import { EventJsonBytes } from './event-json.js';

const GATEWAY_ID = STORED_EVENT_COLUMNS.indexOf('gateway_id');
const PLAIN_TEXT = STORED_EVENT_COLUMNS.indexOf('plain_text');
const TYPE = STORED_EVENT_COLUMNS.indexOf('type');

/**
 * The events of one commit packed for the hand-off from SQLite's writer thread to the server's
 * (docs/webhooks.md "Delivery"): their JSON as one buffer of UTF-8, separated by commas, and
 * typed arrays, all of which the thread's postMessage moves (`transfer`) rather than copies: no
 * string to clone and encode again on the other side.
 */
export class CommittedPacker {
  private readonly json = new EventJsonBytes();
  private readonly ends: number[] = [];
  private readonly seqs: number[] = [];
  private readonly customers: number[] = [];
  private readonly gateways: number[] = [];
  private readonly types: number[] = [];
  private readonly names: string[] = [];
  private readonly indexes = new Map<string, number>();

  private readonly rows: (readonly unknown[])[] = [];

  /** One stored row (STORED_EVENT_COLUMNS order), in seq order. */
  add(row: readonly unknown[], seq: number): void {
    // Its JSON is written in packed(), all rows in one loop, not between two inserts, whose B-tree
    // work pushes the writing code's data out of the caches.
    this.rows.push(row);
    this.seqs.push(seq);
    this.customers.push(this.name(row[0] as string));
    const gateway = row[GATEWAY_ID] as string | null;
    this.gateways.push(gateway === null ? -1 : this.name(gateway));
    // Null only for a scan stored without a type.
    const type = row[TYPE] as string | null;
    this.types.push(type === null ? -1 : this.name(type));
  }

  get size(): number {
    return this.seqs.length;
  }

  /** The commit's events; the seqs of one write transaction follow each other, so none of another lies between the first's predecessor and the last. */
  packed(): CommittedEvents {
    const { rows, json, ends } = this;
    for (let i = 0; i < rows.length; i++) ends.push(json.append(rows[i]!, 1, rows[i]![PLAIN_TEXT] === 1));
    return {
      after: [this.seqs[0]! - 1],
      through: [this.seqs[this.seqs.length - 1]!],
      utf8: this.json.take(),
      ends: Uint32Array.from(this.ends),
      seqs: Float64Array.from(this.seqs),
      customers: Int32Array.from(this.customers),
      gateways: Int32Array.from(this.gateways),
      types: Int32Array.from(this.types),
      names: this.names,
    };
  }

  private name(value: string): number {
    let index = this.indexes.get(value);
    if (index === undefined) {
      index = this.names.length;
      this.names.push(value);
      this.indexes.set(value, index);
    }
    return index;
  }
}

/** The buffers a packed commit's postMessage moves to the other thread instead of copying. */
export function transferred(committed: CommittedEvents): ArrayBuffer[] {
  const { utf8, ends, seqs, customers, gateways, types } = committed;
  return [utf8, ends, seqs, customers, gateways, types].map((array) => array.buffer as ArrayBuffer);
}

/**
 * A customer's events in a packed commit after a seq, as indexes into it: what the webhooks'
 * window keeps of a commit (src/webhooks/recent-events.ts), an event read off only when asked for.
 */
export function customerEvents(batch: CommittedEvents, customerId: string, since: number): Uint32Array {
  const customer = batch.names.indexOf(customerId);
  if (customer === -1) return EMPTY;
  let count = 0;
  for (let i = 0; i < batch.seqs.length; i++) if (batch.customers[i] === customer && batch.seqs[i]! > since) count++;
  const indexes = new Uint32Array(count);
  count = 0;
  for (let i = 0; i < batch.seqs.length; i++) if (batch.customers[i] === customer && batch.seqs[i]! > since) indexes[count++] = i;
  return indexes;
}

const EMPTY = new Uint32Array(0);

/** Event i of a packed commit, as the event log reads it (its JSON decoded only when asked for). */
export function committedEvent(batch: CommittedEvents, utf8: Buffer, i: number): CommittedEvent {
  return new HandedOver(batch, utf8, i);
}

/** The bytes of a packed commit as a Buffer (a structured clone delivers a Uint8Array), without a copy. */
export function commitBuffer(batch: CommittedEvents): Buffer {
  const { utf8 } = batch;
  return Buffer.isBuffer(utf8) ? utf8 : Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength);
}

class HandedOver implements CommittedEvent {
  readonly position: [number];
  readonly gatewayId: string | null;
  readonly type: string;
  readonly start: number;
  readonly end: number;

  constructor(
    batch: CommittedEvents,
    readonly utf8: Buffer,
    i: number,
  ) {
    this.position = [batch.seqs[i]!];
    const gateway = batch.gateways[i]!;
    this.gatewayId = gateway === -1 ? null : batch.names[gateway]!;
    const type = batch.types[i]!;
    this.type = type === -1 ? 'scan' : batch.names[type]!;
    this.start = i === 0 ? 0 : batch.ends[i - 1]! + 1;
    this.end = batch.ends[i]!;
  }

  get json(): string {
    return this.utf8.toString('utf8', this.start, this.end);
  }
}
