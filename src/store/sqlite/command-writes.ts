import type { AuditEntry } from '../../domain/audit.js';
import { timeOrderedUuid } from '../../domain/command-ids.js';
import { deviceAuditEntry, expiredAuditEntry, type CommandRecord } from '../../domain/commands.js';
import type { ClaimRequest, CommandAck, CommandOutcome, CommandWrite, CommandWriteResult, CommandWritesDone, NewCommand, ResponseOutcome } from '../ports/index.js';
import { writeFailure } from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import { COMMAND_COLUMNS, COMMANDS_COLUMNS, commandRecord, commandRecords } from './command-rows.js';
import { firstResponses, responseOutcomes, unchanged } from '../shared/command-responses.js';
import { queueStatusMessages, type StatusWebhookMemo } from './command-messages.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';

const OPEN = "status IN ('QUEUED', 'DELIVERED')";
const bySeq = (rows: CommandRecord[]) => rows.sort((a, b) => a.seq - b.seq);

/** A creation's outcome: the commands stored, or the gateways that are not live gateways of the customer (nothing stored). */
export type Created = { created: CommandRecord[] } | { unknown: string[] };

/** Stores the commands QUEUED with their audit entries and `command.status` messages, unless a gateway is not the customer's live one. */
function create(db: Db, customerId: string, commands: NewCommand[], now: number, audit: AuditEntry[], told: Set<string>, memo?: StatusWebhookMemo): Created {
  const insert = prepared(
    db,
    `INSERT INTO commands (id, customer_id, gateway_id, device_id, name, parameters, status, created, last_updated, expires_at)
     VALUES (@id, @customerId, @gateway_id, @device_id, @name, @parameters, 'QUEUED', @now, @now, @expires_at) RETURNING ${COMMAND_COLUMNS}`,
  ).raw();
  const wanted = [...new Set(commands.map((c) => c.gateway_id))];
  return db
    .transaction((): Created => {
      const live = new Set(
        prepared(db, 'SELECT id FROM gateways WHERE customer_id = ? AND deleted IS NULL AND id IN (SELECT value FROM json_each(?))')
          .pluck()
          .all(customerId, JSON.stringify(wanted)) as string[],
      );
      const unknown = wanted.filter((id) => !live.has(id));
      if (unknown.length) return { unknown };
      const created = commands.map((c) => commandRecord(insert.get({ ...c, customerId, now }) as unknown[]));
      for (const entry of audit) insertAuditEntry(db, entry);
      queueStatusMessages(db, created, now, told, memo);
      return { created };
    })
    .immediate();
}

/** The claim of one gateway's next commands; `NOT IN` only when some are excluded (nearly always none: what was sent is stored DELIVERED by the next claim). */
const claimSql = (excluding: boolean) => `UPDATE commands SET attempts = attempts + 1
  WHERE seq IN (SELECT seq FROM commands WHERE gateway_id = @gatewayId AND status = 'QUEUED' AND expires_at > @now
    ${excluding ? 'AND seq NOT IN (SELECT value FROM json_each(@exclude))' : ''} ORDER BY seq ${LIMIT})
  RETURNING ${COMMAND_COLUMNS}`;
const CLAIM_SQL = claimSql(false);
const CLAIM_EXCLUDING_SQL = claimSql(true);

function claim(db: Db, requests: ClaimRequest[], now: number): CommandRecord[][] {
  const plain = prepared(db, CLAIM_SQL).raw();
  const excluding = prepared(db, CLAIM_EXCLUDING_SQL).raw();
  const one = (r: ClaimRequest) =>
    (r.exclude.length ? excluding.all({ gatewayId: r.gateway_id, exclude: JSON.stringify(r.exclude), now, limit: r.limit }) : plain.all({ gatewayId: r.gateway_id, now, limit: r.limit })) as unknown[][];
  return db.transaction(() => requests.map((r) => bySeq(commandRecords(one(r))))).immediate();
}

function reclaim(db: Db, gatewayId: string, ids: string[], now: number): CommandRecord[] {
  const update = prepared(
    db,
    `UPDATE commands SET attempts = attempts + 1
     WHERE gateway_id = @gatewayId AND id IN (SELECT value FROM json_each(@ids)) AND status = 'QUEUED' AND expires_at > @now RETURNING ${COMMAND_COLUMNS}`,
  ).raw();
  return bySeq(commandRecords(update.all({ gatewayId, ids: JSON.stringify(ids), now }) as unknown[][]));
}

function delivered(db: Db, acks: CommandAck[], now: number, audit: boolean, told: Set<string>, memo?: StatusWebhookMemo): CommandRecord[] {
  const update = prepared(
    db,
    `UPDATE commands SET status = 'DELIVERED', delivered_at = @now, last_updated = @now
     WHERE status = 'QUEUED' AND (id, gateway_id) IN (SELECT value ->> '$.id', value ->> '$.gateway_id' FROM json_each(@acks)) RETURNING ${COMMAND_COLUMNS}`,
  ).raw();
  return db
    .transaction(() => {
      const rows = commandRecords(update.all({ acks: JSON.stringify(acks), now }) as unknown[][]);
      if (audit) for (const row of rows) insertAuditEntry(db, deviceAuditEntry(timeOrderedUuid(now), row, now));
      queueStatusMessages(db, bySeq(rows), now, told, memo);
      return rows;
    })
    .immediate();
}

/** The responses of one group in one UPDATE (the first for each command: shared/command-responses.ts), audited and told in their order. */
function respond(db: Db, responses: CommandOutcome[], now: number, audit: boolean, told: Set<string>, memo?: StatusWebhookMemo): ResponseOutcome[] {
  const complete = prepared(
    db,
    `UPDATE commands SET status = r.value ->> '$.status', details = r.value ->> '$.details', completed_at = @now, last_updated = @now,
       delivered_at = coalesce(commands.delivered_at, @now)
     FROM json_each(@responses) AS r
     WHERE commands.id = r.value ->> '$.id' AND commands.gateway_id = r.value ->> '$.gateway_id'
       AND commands.status IN ('QUEUED', 'DELIVERED') AND commands.expires_at > @now
     RETURNING ${COMMANDS_COLUMNS}`,
  ).raw();
  const known = prepared(
    db,
    `SELECT id, gateway_id FROM commands WHERE (id, gateway_id) IN (SELECT value ->> '$.id', value ->> '$.gateway_id' FROM json_each(?))`,
  );
  return db
    .transaction(() => {
      const first = firstResponses(responses);
      const changed = commandRecords(complete.all({ responses: JSON.stringify(first), now }) as unknown[][]);
      const others = unchanged(first, changed);
      const outcomes = responseOutcomes(responses, changed, others.length ? (known.all(JSON.stringify(others)) as { id: string; gateway_id: string }[]) : []);
      const records = outcomes.filter((o): o is CommandRecord => typeof o === 'object');
      if (audit) for (const record of records) insertAuditEntry(db, deviceAuditEntry(timeOrderedUuid(now), record, now));
      queueStatusMessages(db, records, now, told, memo);
      return outcomes;
    })
    .immediate();
}

/** Stores EXPIRED on up to `limit` commands past their end, each audited and told to webhooks (as every other change). */
function expire(db: Db, now: number, limit: number, told: Set<string>, memo?: StatusWebhookMemo): number {
  const update = prepared(
    db,
    `UPDATE commands SET status = 'EXPIRED', last_updated = @now
     WHERE seq IN (SELECT seq FROM commands WHERE ${OPEN} AND expires_at <= @now ${LIMIT}) RETURNING ${COMMAND_COLUMNS}`,
  ).raw();
  return db
    .transaction(() => {
      const rows = bySeq(commandRecords(update.all({ now, limit }) as unknown[][]));
      for (const row of rows) insertAuditEntry(db, expiredAuditEntry(timeOrderedUuid(now), row, now));
      queueStatusMessages(db, rows, now, told, memo);
      return rows.length;
    })
    .immediate();
}

/**
 * Runs one write of command delivery on the connection (in the writer thread, or inline for an
 * in-memory database); the webhooks it tells go to `told`; `memo`: the webhook lookups of its group.
 */
export function runCommandWrite(db: Db, write: CommandWrite, told: Set<string>, memo?: StatusWebhookMemo): unknown {
  switch (write.kind) {
    case 'create':
      return create(db, write.customerId, write.commands, write.now, write.audit, told, memo);
    case 'claim':
      return claim(db, write.requests, write.now);
    case 'reclaim':
      return reclaim(db, write.gatewayId, write.ids, write.now);
    case 'delivered':
      return delivered(db, write.acks, write.now, write.audit, told, memo);
    case 'respond':
      return respond(db, write.responses, write.now, write.audit, told, memo);
    case 'expire':
      return expire(db, write.now, write.limit, told, memo);
  }
}

/** The connections whose temporary files are in memory (journalInMemory). */
const inMemory = new WeakSet<Db>();

/**
 * Each write's savepoint copies every page it changes to a sub-journal, which SQLite moves to a
 * temporary file past 64 KiB: a creation of 50 commands changes 50 pages of the per-gateway index
 * alone, and the group then wrote and read that file. In memory it costs the copy only (bounded by
 * the pages of one group). Set once per connection, outside a transaction (SQLite refuses it inside).
 */
function journalInMemory(db: Db): void {
  if (inMemory.has(db) || db.inTransaction) return;
  db.pragma('temp_store = MEMORY');
  inMemory.add(db);
}

/**
 * The writes that queued while the last ones ran, in one transaction (a group commit): each in a
 * savepoint of its own (better-sqlite3 nests transactions so), so that one that fails leaves the
 * others. One lock taken instead of one per write: the ingest writer waits the less.
 */
export function runCommandWrites(db: Db, writes: CommandWrite[]): CommandWritesDone {
  journalInMemory(db);
  return db
    .transaction((): CommandWritesDone => {
      const told = new Set<string>();
      const memo: StatusWebhookMemo = new Map();
      const results = writes.map((write): CommandWriteResult => {
        // A write that fails rolls its own messages back with it: only those of the others are told.
        const own = new Set<string>();
        try {
          const result = runCommandWrite(db, write, own, memo);
          for (const id of own) told.add(id);
          return { result };
        } catch (error) {
          // The driver's code crosses too: SQLITE_FULL is told as the disk being full (storage.ts).
          return { error: writeFailure(error) };
        }
      });
      return { results, told: [...told] };
    })
    .immediate();
}
