import type { CommittedEvents } from '../../domain/ingest.js';
import type { CommittedEvent } from '../ports/index.js';

/**
 * The events of one commit packed for the hand-off from SQLite's writer thread to the server's
 * (docs/webhooks.md "Delivery"): one string of their JSON texts separated by commas and typed
 * arrays, which the threads' structured clone copies whole, where an object per event is cloned
 * member by member.
 */
export class CommittedPacker {
  private json = '';
  private readonly ends: number[] = [];
  private readonly seqs: number[] = [];
  private readonly customers: number[] = [];
  private readonly gateways: number[] = [];
  private readonly names: string[] = [];
  private readonly indexes = new Map<string, number>();

  /** One event stored, in seq order. */
  add(customerId: string, seq: number, json: string, gatewayId: string | null): void {
    this.json += this.seqs.length === 0 ? json : `,${json}`;
    this.ends.push(this.json.length);
    this.seqs.push(seq);
    this.customers.push(this.name(customerId));
    this.gateways.push(gatewayId === null ? -1 : this.name(gatewayId));
  }

  get size(): number {
    return this.seqs.length;
  }

  /** The commit's events; the seqs of one write transaction follow each other, so none of another lies between the first's predecessor and the last. */
  packed(): CommittedEvents {
    return {
      after: [this.seqs[0]! - 1],
      through: [this.seqs[this.seqs.length - 1]!],
      json: this.json,
      ends: Uint32Array.from(this.ends),
      seqs: Float64Array.from(this.seqs),
      customers: Int32Array.from(this.customers),
      gateways: Int32Array.from(this.gateways),
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

/**
 * A packed commit's JSON as UTF-8 and each event's end in those bytes, made once per commit for
 * every customer's window: a batch of a commit's events is then slices of it, not a string joined
 * and encoded per batch. A buffer of its own (not Node's shared pool), so that bytes next to each
 * other in one ArrayBuffer are those of one commit.
 */
export interface CommitBytes {
  utf8: Buffer;
  ends: Uint32Array;
}

export function commitBytes(batch: CommittedEvents): CommitBytes {
  const length = Buffer.byteLength(batch.json);
  const utf8 = Buffer.allocUnsafeSlow(length);
  utf8.write(batch.json);
  // Only ASCII: a character is a byte, the ends are the same.
  if (length === batch.json.length) return { utf8, ends: batch.ends };
  const ends = new Uint32Array(batch.ends.length);
  let bytes = 0;
  for (let i = 0; i < ends.length; i++) {
    bytes += Buffer.byteLength(batch.json.slice(i === 0 ? 0 : batch.ends[i - 1], batch.ends[i]));
    ends[i] = bytes;
  }
  return { utf8, ends };
}

/** The events of the customer in a packed commit whose seq is after `since` (their JSON a slice of the commit's string, their bytes of `bytes`). */
export function committedEventsOf(batch: CommittedEvents, customerId: string, since: number, bytes = commitBytes(batch)): CommittedEvent[] {
  const customer = batch.names.indexOf(customerId);
  const events: CommittedEvent[] = [];
  if (customer === -1) return events;
  for (let i = 0; i < batch.seqs.length; i++) {
    if (batch.customers[i] !== customer || batch.seqs[i]! <= since) continue;
    const gateway = batch.gateways[i]!;
    const json = batch.json.slice(i === 0 ? 0 : batch.ends[i - 1]! + 1, batch.ends[i]);
    const start = i === 0 ? 0 : bytes.ends[i - 1]! + 1;
    events.push({ position: [batch.seqs[i]!], json, gatewayId: gateway === -1 ? null : batch.names[gateway]!, utf8: bytes.utf8, start, end: bytes.ends[i]! });
  }
  return events;
}
