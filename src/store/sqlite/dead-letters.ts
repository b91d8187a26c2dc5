import type { DeadLetter, DeadLetterRepository, DeadLetterSummary } from '../ports/index.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

/** Keeps a quarantined message (in the ingest writer's commit); returns its seq, which the log line names. */
export function insertDeadLetter(db: Db, letter: DeadLetter): number {
  const payload = Buffer.from(letter.payload.buffer, letter.payload.byteOffset, letter.payload.byteLength);
  const insert = prepared(
    db,
    `INSERT INTO dead_letters (gateway_id, customer_id, received, quarantined, reason, payload)
     VALUES (@gatewayId, (SELECT customer_id FROM gateways WHERE id = @gatewayId), @received, @quarantined, @reason, @payload)`,
  );
  return Number(insert.run({ ...letter, payload }).lastInsertRowid);
}

/** The dead_letters table (migration 0005): written by the ingest writer, read by the operator. */
export class SqliteDeadLetters implements DeadLetterRepository {
  constructor(private readonly db: Db) {}

  async list(): Promise<DeadLetterSummary[]> {
    return this.db
      .prepare<[], DeadLetterSummary>(
        `SELECT seq, gateway_id, customer_id, received, quarantined, reason, length(payload) AS payload_bytes FROM dead_letters ORDER BY seq`,
      )
      .all();
  }

  /** The payload of one dead letter as received; undefined when there is none with that seq. */
  async payload(seq: number): Promise<Buffer | undefined> {
    return this.db.prepare<[number], Buffer>('SELECT payload FROM dead_letters WHERE seq = ?').pluck().get(seq);
  }
}
