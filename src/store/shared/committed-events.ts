import type { CommittedEvents } from '../../domain/ingest.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';

/**
 * The events of one commit packed for the hand-off from SQLite's writer thread to the server's
 * (docs/webhooks.md "Delivery"): one string of their JSON texts and typed arrays, which the
 * threads' structured clone copies whole, where an object per event is cloned member by member.
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
    this.json += json;
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

/** One event of a packed commit: its position (`[seq]`), JSON and gateway. */
export interface UnpackedEvent {
  position: StreamPosition;
  json: string;
  gatewayId: string | null;
}

/** The events of the customer in a packed commit whose seq is after `since` (their JSON a slice of the commit's string). */
export function committedEventsOf(batch: CommittedEvents, customerId: string, since: number): UnpackedEvent[] {
  const customer = batch.names.indexOf(customerId);
  const events: UnpackedEvent[] = [];
  if (customer === -1) return events;
  for (let i = 0; i < batch.seqs.length; i++) {
    if (batch.customers[i] !== customer || batch.seqs[i]! <= since) continue;
    const gateway = batch.gateways[i]!;
    events.push({ position: [batch.seqs[i]!], json: batch.json.slice(i === 0 ? 0 : batch.ends[i - 1], batch.ends[i]), gatewayId: gateway === -1 ? null : batch.names[gateway]! });
  }
  return events;
}
