import type { AuditEntry } from '../../domain/audit.js';
import { timeOrderedUuid } from '../../domain/command-ids.js';
import type { CreatedIdKey } from '../../domain/page-token.js';
import {
  GATEWAYS_PER_COMMAND_SIGNAL,
  type CancelOutcome,
  type ClaimRequest,
  type CommandOutcome,
  type CommandRecord,
  type CommandAck,
  type CommandRepository,
  type CommandWrite,
  type CommandWriteRoute,
  type CommandWritesDone,
  type NewCommand,
  type ResponseOutcome,
  UnknownGateways,
} from '../ports/index.js';
import { expiredAuditEntry } from '../../domain/commands.js';
import type { LocalSignals } from '../shared/local-signals.js';
import { insertAuditEntry } from './audit.js';
import { queueStatusMessages } from './command-messages.js';
import { COMMAND_COLUMNS, commandById, commandRecord, commandRecords } from './command-rows.js';
import { CommandWriter } from './command-writer.js';
import { runCommandWrite, runCommandWrites, type Created } from './command-writes.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';

/**
 * Commands (migration 0019); every status change is one transaction with its audit entries
 * (ports/commands.ts). The writes of delivery, and in `serve` creation too, run off the server's
 * thread (command-writer.ts: the ingest writer thread's, or one of their own); a cancel on the
 * caller's, as every other repository's writes.
 */
export class SqliteCommands implements CommandRepository {
  private readonly writer: CommandWriter;

  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {
    this.writer = new CommandWriter(db, signals);
  }

  /**
   * In `serve`, with the writes of delivery in the ingest writer thread (routeWrites): on the
   * server's thread a bulk call's transaction waited for the write lock while ingest committed,
   * and MQTT with it. The store alone writes on the caller's thread, as every other repository.
   */
  async createAll(customerId: string, commands: NewCommand[], now: number, audit: AuditEntry[] = []): Promise<CommandRecord[]> {
    const write: CommandWrite = { kind: 'create', customerId, commands, now, audit };
    let outcome: Created;
    if (this.writer.route) outcome = await this.writer.run<Created>(write);
    else {
      const told = new Set<string>();
      outcome = runCommandWrite(this.db, write, told) as Created;
      this.tell(told);
    }
    if ('unknown' in outcome) throw new UnknownGateways(outcome.unknown);
    const created = outcome.created;
    const gatewayIds = [...new Set(created.map((c) => c.gateway_id))];
    for (let i = 0; i < gatewayIds.length; i += GATEWAYS_PER_COMMAND_SIGNAL) {
      this.signals.deliver({ kind: 'commands-queued', gateway_ids: gatewayIds.slice(i, i + GATEWAYS_PER_COMMAND_SIGNAL) });
    }
    return created;
  }

  async byId(customerId: string, id: string): Promise<CommandRecord | undefined> {
    return commandById(this.db, customerId, id);
  }

  async page(customerId: string, gatewayId: string, before: CreatedIdKey | null, limit: number): Promise<CommandRecord[]> {
    return commandRecords(
      prepared(
        this.db,
        `SELECT ${COMMAND_COLUMNS} FROM commands WHERE customer_id = @customerId AND gateway_id = @gatewayId AND (created, id) < (@created, @id)
         ORDER BY created DESC, id DESC ${LIMIT}`,
      )
        .raw()
        .all({ customerId, gatewayId: gatewayId.toLowerCase(), created: before?.created ?? Number.MAX_SAFE_INTEGER, id: before?.id ?? '', limit }) as unknown[][],
    );
  }

  async cancel(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<CancelOutcome> {
    const told = new Set<string>();
    const outcome = this.db
      .transaction((): CancelOutcome => {
        const current = commandById(this.db, customerId, id);
        if (!current) return 'missing';
        if (current.status !== 'QUEUED') return { final: current };
        const expired = current.expires_at <= now;
        const update = prepared(this.db, `UPDATE commands SET status = @status, last_updated = @now WHERE seq = @seq RETURNING ${COMMAND_COLUMNS}`).raw();
        const changed = commandRecord(update.get({ status: expired ? 'EXPIRED' : 'CANCELED', now, seq: current.seq }) as unknown[]);
        queueStatusMessages(this.db, [changed], now, told);
        if (expired) {
          // Stored EXPIRED here rather than by the sweep: audited as the sweep's (not the caller's cancel).
          insertAuditEntry(this.db, expiredAuditEntry(timeOrderedUuid(now), changed, now));
          return { final: changed };
        }
        if (audit) insertAuditEntry(this.db, audit);
        return changed;
      })
      .immediate();
    this.tell(told);
    return outcome;
  }

  /** Wakes the webhooks given `command.status` messages by a commit. */
  private tell(told: Set<string>): void {
    for (const id of told) this.signals.deliver({ kind: 'webhook-changed', webhook_id: id });
  }

  // Async (as the port's other methods): the store's wrapper turns a full disk of these writes, here or in the ingest writer thread, into StorageFull.
  async claim(requests: ClaimRequest[], now: number): Promise<CommandRecord[][]> {
    return this.writer.run({ kind: 'claim', requests, now });
  }

  async reclaim(gatewayId: string, ids: string[], now: number): Promise<CommandRecord[]> {
    return this.writer.run({ kind: 'reclaim', gatewayId, ids, now });
  }

  async delivered(acks: CommandAck[], now: number, audit = false): Promise<CommandRecord[]> {
    return this.writer.run({ kind: 'delivered', acks, now, audit });
  }

  async respond(responses: CommandOutcome[], now: number, audit = false): Promise<ResponseOutcome[]> {
    return this.writer.run({ kind: 'respond', responses, now, audit });
  }

  async expire(now: number, limit: number): Promise<number> {
    return this.writer.run({ kind: 'expire', now, limit });
  }

  routeWrites(route: CommandWriteRoute | undefined): void {
    this.writer.route = route;
  }

  runWrites(writes: CommandWrite[]): CommandWritesDone {
    return runCommandWrites(this.db, writes);
  }

  /** Stops the writer thread. */
  close(): Promise<void> {
    return this.writer.close();
  }

  async session(gatewayId: string, cleanSession: boolean): Promise<number | undefined> {
    const qos = prepared(this.db, 'SELECT qos FROM command_subscriptions WHERE gateway_id = ?').pluck().get(gatewayId) as number | undefined;
    // Read first: most connections have nothing to drop, and a write per connection would take the write lock in a reconnect storm.
    if (!cleanSession || qos === undefined) return cleanSession ? undefined : qos;
    prepared(this.db, 'DELETE FROM command_subscriptions WHERE gateway_id = ?').run(gatewayId);
    return undefined;
  }

  async subscribe(gatewayId: string, qos: number, now: number): Promise<void> {
    prepared(
      this.db,
      'INSERT INTO command_subscriptions (gateway_id, qos, created) VALUES (?, ?, ?) ON CONFLICT (gateway_id) DO UPDATE SET qos = excluded.qos',
    ).run(gatewayId, qos, now);
  }

  async unsubscribe(gatewayId: string): Promise<void> {
    prepared(this.db, 'DELETE FROM command_subscriptions WHERE gateway_id = ?').run(gatewayId);
  }
}
