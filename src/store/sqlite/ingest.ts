import type { BatchResult, IngestMessage } from '../../domain/ingest.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';
import type { ConnectingGateway, IngestRepository } from '../ports/index.js';
import { createCommitter, type Committer } from './ingest-commit.js';
import type { Db } from './open.js';

/**
 * Settings of the connection that commits ingest batches. A batch touches pages all over the
 * indexes (many gateways, random ids): a bigger page cache spares re-reading them. The checkpointer
 * thread copies the WAL back; this connection checkpoints itself only past `walLimitPages`, so that
 * the WAL stays bounded.
 */
export function tuneForIngest(db: Db, walLimitPages: number): void {
  db.pragma('cache_size = -65536');
  db.pragma(`wal_autocheckpoint = ${walLimitPages}`);
}

/** MQTT ingest: the gateway at connect, and the group commit (ingest-commit.ts), its statements prepared on first use. */
export class SqliteIngest implements IngestRepository {
  private readonly lookup;
  private committer: Committer | undefined;

  constructor(private readonly db: Db) {
    // One lookup per connect (never per message): the gateway, and the status of the presented certificate.
    // The status as domain/gateway-certificates.ts names it; NULL for a serial no gateway has.
    this.lookup = db.prepare<[string, string], ConnectingGateway>(
      `SELECT id, customer_id, deleted,
         (SELECT CASE WHEN revoked IS NOT NULL THEN 'revoked' WHEN delivered_at IS NULL THEN 'pending' ELSE 'active' END
          FROM gateway_certificates WHERE serial = ?) AS certificate
       FROM gateways WHERE id = ?`,
    );
  }

  async connectingGateway(id: string, serial: string): Promise<ConnectingGateway | undefined> {
    return this.lookup.get(serial.toLowerCase(), id);
  }

  /** The whole batch in one synchronous transaction: one await per batch, none per event. */
  async commit(batch: IngestMessage[], window?: CreatedWindow, handOff?: boolean): Promise<BatchResult> {
    this.committer ??= createCommitter(this.db);
    return this.committer(batch, window, handOff);
  }
}
