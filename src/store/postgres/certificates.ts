import type { AuditEntry } from '../../domain/audit.js';
import type {
  AuditOf,
  CertificateLookup,
  GatewayCertificate,
  GatewayCertificateRepository,
  IssuedGatewayCertificate,
  Preparation,
  ReprovisionOutcome,
  RevokeOutcome,
} from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import type { Database, Queryable } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';

const CERTIFICATE_COLUMNS = 'serial, gateway_id, cert_pem, created, not_after, delivered_at, revoked, replaces';

/** Stores an issued certificate of the gateway, replacing `replaces` (or the first), handed out at `deliveredAt` (or pending). */
async function insertCertificateRow(
  client: Queryable,
  gatewayId: string,
  certificate: IssuedGatewayCertificate,
  now: number,
  replaces: string | null,
  deliveredAt: number | null,
): Promise<void> {
  await client.query(
    `INSERT INTO gateway_certificates (serial, gateway_id, common_name, cert_pem, sealed_key, created, not_after, delivered_at, replaces)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [certificate.serial, gatewayId, certificate.commonName, certificate.certPem, certificate.sealedKey, now, certificate.notAfter, deliveredAt, replaces],
  );
}

/** Stores an issued certificate (replacing `replaces`, or the first) and the hash of the token that hands it out, in the caller's transaction. */
export async function insertCertificate(client: Queryable, preparation: Preparation, now: number, replaces: string | null): Promise<void> {
  const { certificate } = preparation;
  await insertCertificateRow(client, preparation.gatewayId, certificate, now, replaces, null);
  await client.query(
    `INSERT INTO provisioning_tokens (token_hash, gateway_id, certificate_serial, created, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [preparation.tokenHash, preparation.gatewayId, certificate.serial, now, preparation.expiresAt],
  );
}

/**
 * Revokes the gateway's certificates matching `condition` ($1 now, $2 gateway id, $3 a serial to
 * keep) and erases their sealed keys. The same statement sends `certificate-revoked` for each, so every
 * instance hears it exactly when the transaction commits.
 */
async function revokeWhere(client: Queryable, gatewayId: string, now: number, condition: string, keep: string | null = null): Promise<string[]> {
  const { rows } = await client.query<{ serial: string }>(
    `WITH revoked AS (
       UPDATE gateway_certificates SET revoked = $1, sealed_key = NULL
       WHERE gateway_id = $2 AND ${condition} AND ($3::text IS NULL OR serial <> $3)
       RETURNING serial, gateway_id)
     SELECT serial, pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'certificate-revoked', 'gateway_id', gateway_id, 'serial', serial)::text)
     FROM revoked`,
    [now, gatewayId, keep],
  );
  return rows.map((row) => row.serial);
}

/**
 * The current certificate of the customer's live gateway; with `lock`, the gateway's row locked
 * (FOR UPDATE) so that changes of one gateway's certificates follow one another.
 */
async function currentCertificate(client: Queryable, customerId: string, gatewayId: string, lock: boolean): Promise<CertificateLookup> {
  const live = await client.query(`SELECT 1 FROM gateways WHERE id = $1 AND customer_id = $2 AND deleted IS NULL${lock ? ' FOR UPDATE' : ''}`, [
    gatewayId.toLowerCase(),
    customerId,
  ]);
  if (!live.rowCount) return 'missing';
  const { rows } = await client.query<GatewayCertificate>(
    `SELECT ${CERTIFICATE_COLUMNS} FROM gateway_certificates c
     WHERE gateway_id = $1 AND NOT EXISTS (SELECT 1 FROM gateway_certificates n WHERE n.replaces = c.serial)`,
    [gatewayId.toLowerCase()],
  );
  return rows[0] ?? 'unprepared';
}

/**
 * Inside the transaction that redeems the token of the pending certificate `serial`: it is handed
 * out and its sealed key erased, or, given a `replacement`, that one is stored as handed out,
 * replacing it, and the pending one is revoked. When the pending certificate replaces another
 * (reprovision), every other certificate of the gateway is revoked (and signalled) too, and the
 * gateway is registering again until its first message. Returns the serials revoked.
 */
export async function handOut(client: Queryable, gatewayId: string, serial: string, replacement: IssuedGatewayCertificate | undefined, now: number): Promise<string[]> {
  const replaced = await client.query<{ replaces: string | null }>('SELECT replaces FROM gateway_certificates WHERE serial = $1', [serial]);
  const replaces = replaced.rows[0]?.replaces ?? null;
  if (replacement) await insertCertificateRow(client, gatewayId, replacement, now, serial, now);
  else await client.query('UPDATE gateway_certificates SET sealed_key = NULL, delivered_at = $1 WHERE serial = $2', [now, serial]);
  if (!replaces && !replacement) return [];
  if (replaces) await client.query('UPDATE gateways SET reprovisioned = NULL, last_message = NULL WHERE id = $1', [gatewayId]);
  return revokeWhere(client, gatewayId, now, 'revoked IS NULL', replacement?.serial ?? serial);
}

/** Revocation and re-provisioning of gateway certificates (migration 0006). */
export class PgCertificates implements GatewayCertificateRepository {
  constructor(private readonly db: Database) {}

  current(customerId: string, gatewayId: string): Promise<CertificateLookup> {
    return currentCertificate(this.db, customerId, gatewayId, false);
  }

  revoke(customerId: string, gatewayId: string, now: number, audit?: AuditOf<GatewayCertificate>): Promise<RevokeOutcome> {
    return this.db.transaction(async (client): Promise<RevokeOutcome> => {
      const current = await currentCertificate(client, customerId, gatewayId, true);
      if (typeof current === 'string') return current;
      if (current.revoked !== null) return 'already-revoked';
      await revokeWhere(client, current.gateway_id, now, 'revoked IS NULL');
      await client.query('UPDATE gateways SET certificate_revoked = $1, reprovisioned = NULL WHERE id = $2', [now, current.gateway_id]);
      const revoked = { ...current, revoked: now };
      if (audit) await insertAuditEntry(client, audit(revoked));
      return revoked;
    });
  }

  reprovision(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<ReprovisionOutcome> {
    return this.db.transaction(async (client): Promise<ReprovisionOutcome> => {
      const current = await currentCertificate(client, customerId, preparation.gatewayId, true);
      if (typeof current === 'string') return current;
      // Certificates never handed out (a pending token) go at once: only the new one's token works.
      await revokeWhere(client, current.gateway_id, now, 'revoked IS NULL AND delivered_at IS NULL');
      await insertCertificate(client, preparation, now, current.serial);
      await client.query('UPDATE gateways SET reprovisioned = $1, certificate_revoked = NULL WHERE id = $2', [now, current.gateway_id]);
      if (audit) await insertAuditEntry(client, audit);
      return 'reprovisioned';
    });
  }
}
