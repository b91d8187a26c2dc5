import type { DeadLetterRepository, DeadLetterSummary } from '../ports/index.js';
import type { Database } from './pool.js';

/** Quarantined messages, written by ingest, read by the operator. */
export class PgDeadLetters implements DeadLetterRepository {
  constructor(private readonly db: Database) {}

  /** Every dead letter, oldest first. */
  async list(): Promise<DeadLetterSummary[]> {
    return (
      await this.db.query<DeadLetterSummary>(
        'SELECT seq, gateway_id, customer_id, received, quarantined, reason, octet_length(payload) AS payload_bytes FROM dead_letters ORDER BY seq',
      )
    ).rows;
  }

  async payload(seq: number): Promise<Buffer | undefined> {
    return (await this.db.query<{ payload: Buffer }>('SELECT payload FROM dead_letters WHERE seq = $1', [seq])).rows[0]?.payload;
  }
}
