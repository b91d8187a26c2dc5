import type { Db } from './open.js';
import type { DeadLetter, DeadLetterSummary } from '../ports/index.js';

/** The dead_letters table (migration 0005): written by the ingest writer, read by the operator. */
export class DeadLetterStore {
  private readonly insert;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO dead_letters (gateway_id, customer_id, received, quarantined, reason, payload)
       VALUES (@gatewayId, (SELECT customer_id FROM gateways WHERE id = @gatewayId), @received, @quarantined, @reason, @payload)`,
    );
  }

  /** Keeps a quarantined message; returns its seq, which the log line names. */
  add(letter: DeadLetter): number {
    const payload = Buffer.from(letter.payload.buffer, letter.payload.byteOffset, letter.payload.byteLength);
    return Number(this.insert.run({ ...letter, payload }).lastInsertRowid);
  }

  /** Every dead letter, oldest first. */
  list(): DeadLetterSummary[] {
    return this.db
      .prepare<[], DeadLetterSummary>(
        `SELECT seq, gateway_id, customer_id, received, quarantined, reason, length(payload) AS payload_bytes FROM dead_letters ORDER BY seq`,
      )
      .all();
  }

  /** The payload of one dead letter as received; undefined when there is none with that seq. */
  payload(seq: number): Buffer | undefined {
    return this.db.prepare<[number], Buffer>('SELECT payload FROM dead_letters WHERE seq = ?').pluck().get(seq);
  }
}
