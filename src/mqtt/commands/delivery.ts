import { parseCommandResponse, type CommandRecord } from '../../domain/commands.js';
import type { ClaimRequest, CommandAck, CommandOutcome, ResponseOutcome, Store } from '../../store/ports/index.js';
import type { IngestLog } from '../ingest.js';
import { CommandOutbox, type OutboxConnection } from './outbox.js';
import { TickBatch } from './tick-batch.js';

/**
 * PUBACKs and responses gathered this long before they are stored, on a store that does not group
 * its writes itself (PostgreSQL; SQLite's writer does: sqlite/command-writer.ts): one transaction
 * of a few statements for all of them instead of one per turn of the event loop. Nobody waits on
 * them but the gateway's PUBACK of a response.
 */
export const ACK_HOLD_MS = 50;

/** How often QUEUED and DELIVERED commands past their expires_at are stored EXPIRED, and how many at a time. */
const EXPIRY_SWEEP_MS = 60_000;
const EXPIRY_BATCH = 1_000;

/** The counters of command delivery, part of the broker's stats. */
export interface CommandStats {
  /** Command PUBLISHes written to gateways, resends (DUP) included. */
  commandsSent: number;
  /** Of commandsSent: resends with DUP set. */
  commandsResent: number;
  /** PUBACKs of commands, stored as DELIVERED. */
  commandsDelivered: number;
  /** Responses on command-responses stored as SUCCEEDED or FAILED. */
  commandResponses: number;
  /** Responses dropped: not a response, an unknown command or another gateway's, or one already final or expired. */
  commandResponsesDropped: number;
}

export function newCommandStats(): CommandStats {
  return { commandsSent: 0, commandsResent: 0, commandsDelivered: 0, commandResponses: 0, commandResponsesDropped: 0 };
}

/**
 * Commands to the gateways connected here (docs/commands.md): an outbox per subscribed
 * connection, woken by `commands-queued` from any instance; PUBACKs of one turn of the event loop
 * stored as DELIVERED in one transaction, and so the claims and the responses (TickBatch); the expiry sweep.
 */
export class CommandDelivery {
  private readonly outboxes = new Map<string, CommandOutbox>();
  private readonly claims = new TickBatch<ClaimRequest, CommandRecord[]>((requests) => this.serially(() => this.store.commands.claim(requests, this.clock())));
  private readonly acks: TickBatch<CommandAck, boolean>;
  /** The store runs the writes in order itself: they go to it at once, not one after the other's end. */
  private readonly ordered: boolean;
  private readonly responses: TickBatch<CommandOutcome, ResponseOutcome>;
  /** The last write of delivery in flight: the next waits for it. */
  private writing: Promise<unknown> = Promise.resolve();
  private stopSignals: (() => void) | undefined;
  private stopResume: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<Store, 'commands' | 'signals'>,
    private readonly clock: () => number,
    private readonly log: IngestLog,
    readonly stats: CommandStats,
  ) {
    // SQLite's writer (routeWrites) runs the writes one group at a time, in the order given, and holds PUBACKs and responses itself.
    this.ordered = store.commands.routeWrites !== undefined;
    const hold = this.ordered ? 0 : ACK_HOLD_MS;
    this.acks = new TickBatch((acks) => this.serially(() => this.storeAcks(acks)), hold);
    this.responses = new TickBatch((responses) => this.serially(() => this.store.commands.respond(responses, this.clock(), true)), hold);
  }

  /** Hears `commands-queued`, and wakes every outbox after a gap in the signals; starts the expiry sweep. */
  listen(): void {
    this.stopSignals = this.store.signals.subscribe((signal) => {
      if (signal.kind !== 'commands-queued') return;
      for (const id of signal.gateway_ids) this.outboxes.get(id)?.wake();
    });
    this.stopResume = this.store.signals.onResume(() => {
      for (const outbox of this.outboxes.values()) outbox.wake();
    });
    this.sweepTimer = setInterval(() => void this.sweep(), EXPIRY_SWEEP_MS).unref();
  }

  close(): void {
    this.stopSignals?.();
    this.stopResume?.();
    clearInterval(this.sweepTimer);
    for (const outbox of this.outboxes.values()) outbox.stop();
    this.outboxes.clear();
  }

  /**
   * The gateway is connecting (before its CONNACK): a clean session drops its stored subscription
   * ([MQTT-3.1.2-6]); a persistent one gets the QoS of the subscription kept, if any.
   */
  session(gatewayId: string, cleanSession: boolean): Promise<number | undefined> {
    return this.store.commands.session(gatewayId, cleanSession);
  }

  /** The gateway connected (CONNACK 0 went out): with a subscription kept by its persistent session, it starts receiving at once ([MQTT-3.1.2-4]). */
  connected(gatewayId: string, topic: string, connection: OutboxConnection, keptSubscription: number | undefined): void {
    if (keptSubscription !== undefined && this.outboxes.get(gatewayId)?.connection !== connection) this.open(gatewayId, topic, connection, keptSubscription);
  }

  /** The gateway subscribed to its command topic at `qos`: kept for a persistent session, and its commands start. */
  subscribed(gatewayId: string, topic: string, connection: OutboxConnection, qos: number, cleanSession: boolean): void {
    if (!cleanSession) {
      this.store.commands.subscribe(gatewayId, qos, this.clock()).catch((error: Error) => {
        this.log.warn({ gateway_id: gatewayId, reason: error.message }, 'could not store the command subscription of a gateway');
      });
    }
    const outbox = this.outboxes.get(gatewayId);
    if (outbox?.connection === connection) outbox.resubscribed(qos);
    else this.open(gatewayId, topic, connection, qos);
  }

  unsubscribed(gatewayId: string, connection: OutboxConnection): void {
    this.disconnected(gatewayId, connection);
    this.store.commands.unsubscribe(gatewayId).catch(() => undefined);
  }

  /** The gateway's connection closed, or a newer one replaced it: its unacknowledged commands stay QUEUED. */
  disconnected(gatewayId: string, connection: OutboxConnection): void {
    const outbox = this.outboxes.get(gatewayId);
    if (outbox?.connection !== connection) return;
    outbox.stop();
    this.outboxes.delete(gatewayId);
  }

  /** A PUBACK from the gateway. */
  acknowledged(gatewayId: string, connection: OutboxConnection, packetId: number): void {
    const outbox = this.outboxes.get(gatewayId);
    if (outbox?.connection === connection) outbox.acknowledged(packetId);
  }

  /**
   * A PUBLISH on the gateway's command-responses topic. Resolves once handled: stored, or dropped
   * and counted (not a response, an unknown or foreign command, a final one); rejects when the
   * store failed, so that it is not acknowledged and the gateway sends it again.
   */
  async respond(gatewayId: string, payload: Buffer): Promise<void> {
    const response = parseCommandResponse(payload);
    if ('invalid' in response) return this.dropped(gatewayId, response.invalid);
    const outcome = await this.responses.add({ gateway_id: gatewayId, id: response.command_id, status: response.status, details: response.details ?? null });
    if (outcome === 'unknown') return this.dropped(gatewayId, `no command ${response.command_id} of this gateway`, response.command_id);
    if (outcome === 'final') return this.dropped(gatewayId, 'the command is final or expired', response.command_id);
    this.stats.commandResponses++;
  }

  private dropped(gatewayId: string, reason: string, commandId?: string): void {
    this.stats.commandResponsesDropped++;
    this.log.warn({ gateway_id: gatewayId, command_id: commandId, reason }, 'command response dropped');
  }

  /** A new outbox for the connection; one of an older connection of the gateway stops. */
  private open(gatewayId: string, topic: string, connection: OutboxConnection, qos: number): void {
    this.outboxes.get(gatewayId)?.stop();
    const outbox = new CommandOutbox(gatewayId, topic, connection, qos, {
      store: this.store,
      claim: (request) => this.claims.add(request),
      clock: this.clock,
      log: this.log,
      acknowledged: (ack) => this.acks.add(ack).catch(() => false),
      sent: (dup) => {
        this.stats.commandsSent++;
        if (dup) this.stats.commandsResent++;
      },
    });
    this.outboxes.set(gatewayId, outbox);
    outbox.wake();
  }

  /**
   * Runs the writes of delivery one at a time: on PostgreSQL two multi-row UPDATEs of one
   * gateway's commands (the PUBACKs of a turn, the responses of the next) that overlap take their
   * row locks in different orders and deadlock; one at a time they cannot. SQLite's writer runs
   * them in order anyway; waiting for each there would leave a claim behind PUBACKs it holds.
   */
  private serially<T>(write: () => Promise<T>): Promise<T> {
    if (this.ordered) return write();
    const next = this.writing.then(write, write);
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** The PUBACKs of one turn of the event loop, stored together (true each); a failure is logged (those commands stay QUEUED: false). */
  private async storeAcks(acks: CommandAck[]): Promise<boolean[]> {
    const now = this.clock();
    try {
      const changed = await this.store.commands.delivered(acks, now, true);
      this.stats.commandsDelivered += changed.length;
      return acks.map(() => true);
    } catch (error) {
      // Not stored: those commands stay QUEUED and are sent again (with DUP) when next claimed.
      this.log.warn({ commands: acks.length, reason: (error as Error).message }, 'could not store the delivery of commands');
      return acks.map(() => false);
    }
  }

  private async sweep(): Promise<void> {
    try {
      while ((await this.store.commands.expire(this.clock(), EXPIRY_BATCH)) === EXPIRY_BATCH);
    } catch (error) {
      this.log.warn({ reason: (error as Error).message }, 'could not store expired commands');
    }
  }
}
