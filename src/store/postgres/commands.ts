import type { AuditEntry } from '../../domain/audit.js';
import { timeOrderedUuid } from '../../domain/command-ids.js';
import { deviceAuditEntry, expiredAuditEntry } from '../../domain/commands.js';
import type { CreatedIdKey } from '../../domain/page-token.js';
import { GATEWAYS_PER_COMMAND_SIGNAL, type CancelOutcome, type ClaimRequest, type CommandOutcome, type CommandRecord, type CommandAck, type CommandRepository, type NewCommand, type ResponseOutcome, UnknownGateways } from '../ports/index.js';
import { audited, insertAuditEntries, insertAuditEntry } from './audit.js';
import { firstResponses, responseOutcomes, unchanged } from '../shared/command-responses.js';
import { queueStatusMessages } from './command-messages.js';
import type { Database } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';

const OPEN = "status IN ('QUEUED', 'DELIVERED')";

// One row per element of the arrays, in their order: `seq` numbers them in creation order.
const INSERT_SQL = `INSERT INTO commands (id, customer_id, gateway_id, device_id, name, parameters, status, created, last_updated, expires_at)
  SELECT c.id, $1, c.gateway_id, c.device_id, c.name, c.parameters, 'QUEUED', $2, $2, c.expires_at
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[]) WITH ORDINALITY AS c(id, gateway_id, device_id, name, parameters, expires_at, n)
  ORDER BY c.n
  RETURNING *`;

// Sent inside the creating transaction: NOTIFY goes out exactly when it commits.
const NOTIFY_SQL = `SELECT pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'commands-queued', 'gateway_ids', $1::text[])::text)`;

// Each request's gateway and limit side by side; the excluded (gateway, seq) pairs likewise. A
// gateway appears once per call (one outbox per gateway).
const CLAIM_SQL = `WITH excluded AS (SELECT * FROM unnest($4::text[], $5::bigint[]) AS x(gateway_id, seq)),
  picked AS (
    SELECT c.seq FROM unnest($1::text[], $2::int[]) AS r(gateway_id, lim)
    CROSS JOIN LATERAL (
      SELECT seq FROM commands
      WHERE gateway_id = r.gateway_id AND status = 'QUEUED' AND expires_at > $3
        AND NOT EXISTS (SELECT 1 FROM excluded AS x WHERE x.gateway_id = r.gateway_id AND x.seq = commands.seq)
      ORDER BY seq LIMIT r.lim
    ) AS c
  )
  UPDATE commands SET attempts = attempts + 1 WHERE seq IN (SELECT seq FROM picked) RETURNING *`;

// The first response for each command of a group, side by side (shared/command-responses.ts).
const RESPOND_SQL = `UPDATE commands AS c SET status = r.status, details = r.details, completed_at = $1, last_updated = $1, delivered_at = coalesce(c.delivered_at, $1)
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS r(id, gateway_id, status, details)
  WHERE c.id = r.id AND c.gateway_id = r.gateway_id AND c.status IN ('QUEUED', 'DELIVERED') AND c.expires_at > $1
  RETURNING c.*`;

const KNOWN_SQL = 'SELECT id, gateway_id FROM commands WHERE (id, gateway_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))';

/** Commands (migration 0014), as SQLite's (sqlite/commands.ts); the `commands-queued` signal goes out with the commit. */
export class PgCommands implements CommandRepository {
  constructor(private readonly db: Database) {}

  async createAll(customerId: string, commands: NewCommand[], now: number, audit?: AuditEntry[]): Promise<CommandRecord[]> {
    return audited(
      this.db,
      async (client) => {
        const wanted = [...new Set(commands.map((c) => c.gateway_id))];
        // FOR SHARE: a gateway deleted meanwhile waits for this commit, or is missing here.
        const live = await client.query<{ id: string }>('SELECT id FROM gateways WHERE customer_id = $1 AND deleted IS NULL AND id = ANY($2::text[]) FOR SHARE', [customerId, wanted]);
        const found = new Set(live.rows.map((row) => row.id));
        const missing = wanted.filter((id) => !found.has(id));
        if (missing.length) throw new UnknownGateways(missing);
        const { rows } = await client.query<CommandRecord>(INSERT_SQL, [
          customerId,
          now,
          commands.map((c) => c.id),
          commands.map((c) => c.gateway_id),
          commands.map((c) => c.device_id),
          commands.map((c) => c.name),
          commands.map((c) => c.parameters),
          commands.map((c) => c.expires_at),
        ]);
        rows.sort((a, b) => a.seq - b.seq);
        await queueStatusMessages(client, rows, now);
        const gatewayIds = [...new Set(rows.map((c) => c.gateway_id))];
        for (let i = 0; i < gatewayIds.length; i += GATEWAYS_PER_COMMAND_SIGNAL) {
          await client.query(NOTIFY_SQL, [gatewayIds.slice(i, i + GATEWAYS_PER_COMMAND_SIGNAL)]);
        }
        return rows;
      },
      () => audit,
    );
  }

  async byId(customerId: string, id: string): Promise<CommandRecord | undefined> {
    return (await this.db.query<CommandRecord>('SELECT * FROM commands WHERE id = $1 AND customer_id = $2', [id.toLowerCase(), customerId])).rows[0];
  }

  async page(customerId: string, gatewayId: string, before: CreatedIdKey | null, limit: number): Promise<CommandRecord[]> {
    const { rows } = await this.db.query<CommandRecord>(
      `SELECT * FROM commands WHERE customer_id = $1 AND gateway_id = $2 AND (created, id) < ($3, $4)
       ORDER BY created DESC, id DESC LIMIT $5`,
      [customerId, gatewayId.toLowerCase(), before?.created ?? Number.MAX_SAFE_INTEGER, before?.id ?? '', limit],
    );
    return rows;
  }

  async cancel(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<CancelOutcome> {
    return this.db.transaction(async (client): Promise<CancelOutcome> => {
      const current = (await client.query<CommandRecord>('SELECT * FROM commands WHERE id = $1 AND customer_id = $2 FOR UPDATE', [id.toLowerCase(), customerId])).rows[0];
      if (!current) return 'missing';
      if (current.status !== 'QUEUED') return { final: current };
      const expired = current.expires_at <= now;
      const { rows } = await client.query<CommandRecord>('UPDATE commands SET status = $1, last_updated = $2 WHERE seq = $3 RETURNING *', [
        expired ? 'EXPIRED' : 'CANCELED',
        now,
        current.seq,
      ]);
      await queueStatusMessages(client, rows, now);
      if (expired) {
        // Stored EXPIRED here rather than by the sweep: audited as the sweep's (not the caller's cancel).
        await insertAuditEntry(client, expiredAuditEntry(timeOrderedUuid(now), rows[0]!, now));
        return { final: rows[0]! };
      }
      if (audit) await insertAuditEntry(client, audit);
      return rows[0]!;
    });
  }

  /** One statement for every request: each gateway's first QUEUED commands (LATERAL, by the partial index), less those excluded. */
  async claim(requests: ClaimRequest[], now: number): Promise<CommandRecord[][]> {
    const excluded = requests.flatMap((r) => r.exclude.map((seq) => [r.gateway_id, seq] as const));
    const { rows } = await this.db.query<CommandRecord>(CLAIM_SQL, [
      requests.map((r) => r.gateway_id),
      requests.map((r) => r.limit),
      now,
      excluded.map(([gateway]) => gateway),
      excluded.map(([, seq]) => seq),
    ]);
    const byGateway = new Map<string, CommandRecord[]>();
    for (const row of rows.sort((a, b) => a.seq - b.seq)) {
      const list = byGateway.get(row.gateway_id);
      if (list) list.push(row);
      else byGateway.set(row.gateway_id, [row]);
    }
    return requests.map((r) => byGateway.get(r.gateway_id) ?? []);
  }

  async reclaim(gatewayId: string, ids: string[], now: number): Promise<CommandRecord[]> {
    const { rows } = await this.db.query<CommandRecord>(
      `UPDATE commands SET attempts = attempts + 1
       WHERE gateway_id = $1 AND id = ANY($2::text[]) AND status = 'QUEUED' AND expires_at > $3 RETURNING *`,
      [gatewayId, ids, now],
    );
    return rows.sort((a, b) => a.seq - b.seq);
  }

  async delivered(acks: CommandAck[], now: number, audit = false): Promise<CommandRecord[]> {
    return audited(
      this.db,
      async (client) => {
        const { rows } = await client.query<CommandRecord>(
          `UPDATE commands SET status = 'DELIVERED', delivered_at = $1, last_updated = $1
           WHERE status = 'QUEUED' AND (id, gateway_id) IN (SELECT * FROM unnest($2::text[], $3::text[])) RETURNING *`,
          [now, acks.map((a) => a.id), acks.map((a) => a.gateway_id)],
        );
        await queueStatusMessages(client, rows.sort((a, b) => a.seq - b.seq), now);
        return rows;
      },
      (rows) => (audit ? rows.map((row) => deviceAuditEntry(timeOrderedUuid(now), row, now)) : undefined),
    );
  }

  /** The responses in one UPDATE (the first for each command: shared/command-responses.ts), audited in one INSERT, in their order. */
  async respond(responses: CommandOutcome[], now: number, audit = false): Promise<ResponseOutcome[]> {
    const first = firstResponses(responses);
    return audited(
      this.db,
      async (client) => {
        const { rows: changed } = await client.query<CommandRecord>(RESPOND_SQL, [
          now,
          first.map((r) => r.id),
          first.map((r) => r.gateway_id),
          first.map((r) => r.status),
          first.map((r) => r.details),
        ]);
        const others = unchanged(first, changed);
        const known = others.length
          ? (await client.query<{ id: string; gateway_id: string }>(KNOWN_SQL, [others.map((r) => r.id), others.map((r) => r.gateway_id)])).rows
          : [];
        const outcomes = responseOutcomes(responses, changed, known);
        await queueStatusMessages(client, outcomes.filter((o): o is CommandRecord => typeof o === 'object'), now);
        return outcomes;
      },
      (outcomes) => (audit ? outcomes.filter((o): o is CommandRecord => typeof o === 'object').map((row) => deviceAuditEntry(timeOrderedUuid(now), row, now)) : undefined),
    );
  }

  /** Each command stored EXPIRED is audited and told to webhooks in the same transaction, as every other change. */
  async expire(now: number, limit: number): Promise<number> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<CommandRecord>(
        `UPDATE commands SET status = 'EXPIRED', last_updated = $1
         WHERE seq IN (SELECT seq FROM commands WHERE ${OPEN} AND expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *`,
        [now, limit],
      );
      rows.sort((a, b) => a.seq - b.seq);
      await insertAuditEntries(client, rows.map((row) => expiredAuditEntry(timeOrderedUuid(now), row, now)));
      await queueStatusMessages(client, rows, now);
      return rows.length;
    });
  }

  async session(gatewayId: string, cleanSession: boolean): Promise<number | undefined> {
    const qos = (await this.db.query<{ qos: number }>('SELECT qos FROM command_subscriptions WHERE gateway_id = $1', [gatewayId])).rows[0]?.qos;
    // Read first: most connections have nothing to drop (as SQLite's, whose write lock a reconnect storm would take).
    if (!cleanSession || qos === undefined) return cleanSession ? undefined : qos;
    await this.db.query('DELETE FROM command_subscriptions WHERE gateway_id = $1', [gatewayId]);
    return undefined;
  }

  async subscribe(gatewayId: string, qos: number, now: number): Promise<void> {
    await this.db.query(
      'INSERT INTO command_subscriptions (gateway_id, qos, created) VALUES ($1, $2, $3) ON CONFLICT (gateway_id) DO UPDATE SET qos = excluded.qos',
      [gatewayId, qos, now],
    );
  }

  async unsubscribe(gatewayId: string): Promise<void> {
    await this.db.query('DELETE FROM command_subscriptions WHERE gateway_id = $1', [gatewayId]);
  }
}
