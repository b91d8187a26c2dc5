import { commandMessage, type CommandRecord } from '../../domain/commands.js';
import type { ClaimRequest, CommandAck, Store } from '../../store/ports/index.js';
import type { IngestLog } from '../ingest.js';
import { publishPacket } from '../packets.js';

/** Commands sent to one gateway and not acknowledged yet: more wait in the store until PUBACKs free room. */
export const COMMAND_WINDOW = 16;
/** A command not acknowledged this long is sent again on the same connection, with DUP. */
export const RESEND_AFTER_MS = 30_000;
/** After a failed claim (the store did not answer), the next try. */
const RETRY_MS = 1_000;

/** What an outbox needs of its gateway's connection. */
export interface OutboxConnection {
  /** Writes a packet to the gateway (nothing once the connection closed). */
  send(packet: Buffer): void;
  readonly protocolLevel: number;
}

/** What an outbox needs of the broker. */
export interface OutboxHost {
  store: Pick<Store, 'commands'>;
  /** The gateway's next commands (CommandRepository.claim, batched with other gateways'). */
  claim(request: ClaimRequest): Promise<CommandRecord[]>;
  clock: () => number;
  log: IngestLog;
  /** The gateway acknowledged a command (or was sent it at QoS 0); resolves once that is stored (true), or failed to be (false). */
  acknowledged(ack: CommandAck): Promise<boolean>;
  /** Counted per PUBLISH written. */
  sent(dup: boolean): void;
}

interface InFlight {
  command: CommandRecord;
  sentAt: number;
}

/**
 * One subscribed connection's commands (docs/commands.md "Delivery"): claimed from the store in
 * creation order, at most COMMAND_WINDOW unacknowledged at a time ([MQTT-4.4]: each kept until
 * its PUBACK), published at the subscription's QoS. What the store still holds as QUEUED is sent
 * again on the gateway's next connection, with DUP set ([MQTT-4.4.0-1]); a claim is the check of
 * expiry and cancel at each send.
 */
export class CommandOutbox {
  private readonly inFlight = new Map<number, InFlight>();
  /** `seq`s acknowledged whose DELIVERED is not stored yet: not to be claimed again meanwhile. */
  private readonly recording = new Set<number>();
  private nextPacketId = 1;
  private filling = false;
  private again = false;
  /**
   * The last claim found fewer commands than the window had room for: nothing else waits in the
   * store, and a PUBACK that frees a slot need not ask again (a claim per command would double
   * the writes of delivery). A command queued later wakes the outbox by its signal.
   */
  private drained = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The PUBLISHes of one claim or resend, while `together` gathers them. */
  private gathered: Buffer[] | undefined;

  constructor(
    readonly gatewayId: string,
    private readonly topic: string,
    readonly connection: OutboxConnection,
    private qos: number,
    private readonly host: OutboxHost,
  ) {}

  /** The subscription was made again, maybe at another QoS; commands may wait. */
  resubscribed(qos: number): void {
    this.qos = qos;
    this.wake();
  }

  /** Commands may have been queued: claim and send what the window has room for. */
  wake(): void {
    this.drained = false;
    this.fillRoom();
  }

  private fillRoom(): void {
    if (this.stopped || this.drained) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    void this.fill();
  }

  /** A PUBACK: the command is delivered; its slot is free. An identifier not in flight is ignored ([MQTT-4.3.2]). */
  acknowledged(packetId: number): void {
    const entry = this.inFlight.get(packetId);
    if (!entry) return;
    this.inFlight.delete(packetId);
    this.record(entry.command);
    this.fillRoom();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async fill(): Promise<void> {
    this.filling = true;
    try {
      while (!this.stopped) {
        this.again = false;
        const room = COMMAND_WINDOW - this.inFlight.size;
        if (room <= 0) break;
        const exclude = [...this.recording, ...[...this.inFlight.values()].map((e) => e.command.seq)];
        const claimed = await this.host.claim({ gateway_id: this.gatewayId, exclude, limit: room });
        // Claimed and not sent (the connection closed meanwhile): still QUEUED, sent on the next one.
        if (this.stopped) break;
        this.together(() => {
          for (const command of claimed) this.send(command, command.attempts > 1);
        });
        if (claimed.length < room && !this.again) {
          this.drained = true;
          break;
        }
      }
    } catch (error) {
      this.host.log.warn({ gateway_id: this.gatewayId, reason: (error as Error).message }, 'could not read the commands of a gateway; trying again');
      setTimeout(() => this.wake(), RETRY_MS).unref();
    } finally {
      this.filling = false;
    }
  }

  private send(command: CommandRecord, dup: boolean, packetId = this.qos === 0 ? 0 : this.allocate()): void {
    const now = this.host.clock();
    const packet = publishPacket(
      { topic: this.topic, payload: commandMessage(command), packetId, dup, messageExpirySeconds: Math.max(1, Math.ceil((command.expires_at - now) / 1000)) },
      this.connection.protocolLevel,
    );
    if (this.gathered) this.gathered.push(packet);
    else this.connection.send(packet);
    this.host.sent(dup);
    // QoS 0: nothing will be acknowledged; written is as delivered as it gets.
    if (packetId === 0) return this.record(command);
    this.inFlight.set(packetId, { command, sentAt: now });
    this.timer ??= setInterval(() => void this.resendLate(), RESEND_AFTER_MS / 2).unref();
  }

  /** The PUBLISHes `sending` makes, written to the gateway at once: one TLS record and system call, not one each. */
  private together(sending: () => void): void {
    const packets: Buffer[] = (this.gathered = []);
    try {
      sending();
    } finally {
      this.gathered = undefined;
      if (packets.length) this.connection.send(packets.length === 1 ? packets[0]! : Buffer.concat(packets));
    }
  }

  /** Stores the command DELIVERED; one whose DELIVERED could not be stored is still QUEUED, and claimed again. */
  private record(command: CommandRecord): void {
    this.recording.add(command.seq);
    void this.host.acknowledged({ gateway_id: this.gatewayId, id: command.id }).then((stored) => {
      this.recording.delete(command.seq);
      if (!stored) this.wake();
    });
  }

  /** A free packet identifier, 1..65535 in turn ([MQTT-2.3.1-2]: not one in flight). */
  private allocate(): number {
    let id: number;
    do {
      id = this.nextPacketId;
      this.nextPacketId = id === 0xffff ? 1 : id + 1;
    } while (this.inFlight.has(id));
    return id;
  }

  /** Sends again, with DUP and the same identifier, what was not acknowledged in time and is still QUEUED and unexpired. */
  private async resendLate(): Promise<void> {
    const now = this.host.clock();
    const late = [...this.inFlight].filter(([, entry]) => now - entry.sentAt >= RESEND_AFTER_MS);
    if (late.length === 0 || this.stopped) return;
    try {
      const still = new Set((await this.host.store.commands.reclaim(this.gatewayId, late.map(([, e]) => e.command.id), now)).map((c) => c.id));
      this.together(() => {
        for (const [packetId, entry] of late) {
          if (this.stopped || this.inFlight.get(packetId) !== entry) continue;
          if (still.has(entry.command.id)) this.send(entry.command, true, packetId);
          else this.inFlight.delete(packetId);
        }
      });
      this.wake();
    } catch (error) {
      this.host.log.warn({ gateway_id: this.gatewayId, reason: (error as Error).message }, 'could not resend the commands of a gateway');
    }
  }
}
