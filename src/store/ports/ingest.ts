import type { CertificateStatus } from '../../domain/gateway-certificates.js';
import type { BatchResult, IngestMessage } from '../../domain/ingest.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';

/** A gateway as the broker sees it at connect: its customer, whether it was deleted, and the status of the presented certificate. */
export interface ConnectingGateway {
  id: string;
  customer_id: string;
  deleted: number | null;
  /** The status of the certificate of the serial asked about, of any gateway; null for a serial the store does not know. */
  certificate: CertificateStatus | null;
}

export interface IngestRepository {
  /** The gateway a client certificate names, deleted or not, with the status of the certificate of `serial` (lower-case hex). */
  connectingGateway(id: string, serial: string): Promise<ConnectingGateway | undefined>;
  /**
   * One group commit (src/domain/ingest-batch-plan.ts) in one transaction; a message the database
   * refuses alone is INVALID without failing its neighbours. Never throws: when the database
   * fails, every message is FAILED (nothing is acknowledged). `handOff`: the result carries the
   * events stored (BatchResult.committed) where the store can (SQLite, a batch committed whole).
   */
  commit(batch: IngestMessage[], window?: CreatedWindow, handOff?: boolean): Promise<BatchResult>;
}

/** A message kept for the operator instead of being stored (docs/gateways-mqtt.md "Quarantine"). */
export interface DeadLetter {
  gatewayId: string;
  received: number;
  quarantined: number;
  reason: string;
  payload: Uint8Array;
}

/** A dead letter as `scanhub operator dead-letters list` shows it: the payload by its size. */
export interface DeadLetterSummary {
  seq: number;
  gateway_id: string;
  customer_id: string | null;
  received: number;
  quarantined: number;
  reason: string;
  payload_bytes: number;
}

export interface DeadLetterRepository {
  /** Every dead letter, oldest first. */
  list(): Promise<DeadLetterSummary[]>;
  payload(seq: number): Promise<Buffer | undefined>;
}
