import type { TLSSocket } from 'node:tls';
import type { ConnectionHost, GatewaySession } from './gateway-session.js';
import {
  acceptedProperties,
  acknowledgement5,
  checkConnect5,
  checkPublishFlags5,
  connack5,
  disconnect5,
  publishPayloadStart,
} from './mqtt5.js';
import {
  PINGRESP,
  PacketReader,
  PacketType,
  ProtocolError,
  acknowledgement,
  connack,
  readConnect,
  type ConnectPacket,
  type PacketRefusal,
} from './packets.js';
import { AckBuffer } from './ack-buffer.js';
import { KeepAlive } from './keep-alive.js';
import { peerCertificateOf } from './peer-certificate.js';
import { REFUSAL_CODES, ReasonCode, type CloseReason, type ConnectRefusal } from './refusals.js';
import { subscribeAnswer, unsubscribeAnswer } from './subscriptions.js';
import { onControlPacket, type ControlHandlers } from './control-packets.js';

// One gateway's MQTT connection, from its CONNECT to its close: the whole protocol a publishing
// gateway needs ([MQTT-3.1] to [MQTT-3.14]; MQTT 5 3.1 to 3.14 at level 5, where every refusal
// also carries its reason code: refusals.ts), read straight off the TLS socket, and the one
// subscription it may make, to its commands (the host's, src/mqtt/commands/). Each PUBLISH goes to
// the ingest writer as a view of the bytes it arrived in; its PUBACK is written once the writer's
// transaction committed, coalesced with the others of that commit into one write per connection.

const CONNECTING = 0;
const AUTHENTICATING = 1;
const CONNECTED = 2;
const CLOSED = 3;

/** Messages of one connection waiting for their commit before its socket is read again: bounds what one gateway can queue. */
const MAX_PENDING_PER_CONNECTION = 4096;
/** Bytes written and not yet taken by the peer before its socket is read again. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** QoS 1 messages an MQTT 5 gateway may have unacknowledged, waiting for their commit (CONNACK's Receive Maximum, MQTT 5 3.2.2.3.3). */
const RECEIVE_MAXIMUM = MAX_PENDING_PER_CONNECTION;
/** How long a closing connection's last packet (DISCONNECT, a refusing CONNACK) may take to go out before the socket is cut. */
const CLOSE_GRACE_MS = 1000;

/** The writer's token of a message: its packet identifier and QoS (0 for QoS 0: nothing to acknowledge). */
const tokenOf = (qos: number, packetId: number) => (qos << 16) | packetId;

export class GatewayConnection {
  /** The certificate's subject CN and serial (lower-case hex), read once at the start. */
  readonly commonName: string | undefined;
  readonly serial: string;
  session: GatewaySession | undefined;
  /** The CONNECT's protocol level: 3, 4 or 5 (protocol-level.ts let no other through); what the broker writes depends on it. */
  get protocolLevel(): number {
    return this.level;
  }
  private level = 4;
  private state = CONNECTING;
  private readonly reader: PacketReader;
  private connect: ConnectPacket | undefined;
  /** Packets that arrived after the CONNECT, before its CONNACK: read once authenticated. */
  private deferred: [number, Buffer][] = [];
  /** Acknowledgements of the current commit, written together on the next tick. */
  private readonly acks = new AckBuffer((acks) => {
    if (!this.closing && this.state !== CLOSED) this.write(acks);
  });
  private pending = 0;
  /** QoS 1 and 2 messages not acknowledged yet (pending counts QoS 0 too). */
  private inFlight = 0;
  /** The connection ends once its messages before a refused PUBLISH are acknowledged: then these bytes go out last (MQTT 5). */
  private lastWords: Buffer | undefined;
  /** Its last packet is on its way: nothing more is written. */
  private closing = false;
  private paused = false;
  private readonly keepAlive = new KeepAlive((limitMs) => this.fail(`no packet within ${limitMs / 1000} s (keep alive)`, true, REFUSAL_CODES.close.keep_alive));
  private graceful = false;
  private stopped = false;
  /** Why the connection closed, when the server closed it on an error; logged once at close. */
  private errorReason: string | undefined;

  constructor(
    readonly socket: TLSSocket,
    private readonly host: ConnectionHost<GatewayConnection>,
    private readonly maxPacketBytes: number,
  ) {
    const { cn, serial } = peerCertificateOf(socket);
    this.commonName = cn;
    this.serial = serial;
    this.reader = new PacketReader(maxPacketBytes, this.onPacket);
    socket.on('data', this.onData);
    socket.on('error', (error: Error) => {
      this.errorReason ??= error.message;
    });
    socket.once('close', () => this.onClose());
    // Flowing from here (the protocol-level check before read it in paused mode).
    socket.resume();
  }

  /** Whether the CONNECT asked for a clean session ([MQTT-3.1.2-6]; MQTT 5 Clean Start, 3.1.2.4). */
  get cleanSession(): boolean {
    return this.connect?.cleanSession ?? true;
  }

  /** Writes a packet the broker sends on its own (a command); nothing once closed. */
  send(packet: Buffer): void {
    if (this.state === CONNECTED) this.write(packet);
  }

  /** Closes the connection from the server's side (deleted or revoked gateway, takeover, shutdown); at level 5 DISCONNECT says why. */
  close(reason: CloseReason): void {
    if (this.state === CLOSED) return;
    this.closeWith(this.level === 5 && this.state === CONNECTED ? disconnect5(REFUSAL_CODES.close[reason]) : undefined);
  }

  /**
   * Shutdown, once every message read is acknowledged: the connection ends after its unsent
   * bytes; at level 5 with DISCONNECT 0x8B "server shutting down" last (MQTT 5 3.14.2.1).
   */
  end(): void {
    if (this.closing) return;
    this.acks.flush();
    if (this.state !== CONNECTED || this.level !== 5) return void this.socket.end();
    this.closing = true;
    this.socket.end(disconnect5(REFUSAL_CODES.close.shutting_down));
  }

  /**
   * Shutdown: packets that arrive from now on are dropped unread (never acknowledged, so the
   * gateway sends them again to the next server), while what is in flight is still acknowledged.
   * The socket keeps being read, so that its close is a FIN, not a reset that would lose those
   * acknowledgements.
   */
  stopReading(): void {
    this.stopped = true;
    this.deferred = [];
    this.socket.resume();
  }

  private readonly onData = (chunk: Buffer) => {
    if (this.stopped) return;
    this.keepAlive.seen();
    const refusal = this.reader.push(chunk);
    if (refusal && this.state !== CLOSED && !this.errorReason) this.refuse(refusal);
  };

  private refuse(refusal: PacketRefusal): void {
    this.host.packetRefused(this, refusal);
    if (refusal.reason === 'oversized') this.fail(`packet of ${refusal.packetBytes} bytes over the limit`, false, REFUSAL_CODES.close.packet_too_large);
    else this.fail('malformed Remaining Length', false, REFUSAL_CODES.close.malformed_length);
  }

  /**
   * Closes the connection for a protocol error ([MQTT-4.8.0-1]); `log` says whether 'closed on
   * error' is logged for it. At level 5 the reason code goes first (MQTT 5 4.13): in CONNACK
   * before the connection is accepted (no other packet may precede it), else in DISCONNECT.
   */
  private fail(reason: string, log = true, reasonCode?: number): void {
    if (this.state === CLOSED) return;
    if (log) this.errorReason ??= reason;
    if (this.level !== 5 || reasonCode === undefined || this.state === AUTHENTICATING) return this.closeWith(undefined);
    this.closeWith(this.state === CONNECTED ? disconnect5(reasonCode) : connack5(reasonCode));
  }

  /**
   * Stops reading and ends the connection: at once without `last`; with it, once `last` is
   * flushed (after the acknowledgements of what was committed), or after CLOSE_GRACE_MS when the
   * peer does not read it.
   */
  private closeWith(last: Buffer | undefined): void {
    this.reader.stop();
    if (!last || this.closing) return void this.socket.destroy();
    this.acks.flush();
    this.closing = true;
    this.socket.end(last, () => this.socket.destroy());
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private readonly onPacket = (firstByte: number, body: Buffer): void => {
    try {
      if (this.state === CONNECTED) this.onConnectedPacket(firstByte, body);
      else if (this.state === CONNECTING) this.onConnect(firstByte, body);
      else if (this.state === AUTHENTICATING) this.deferred.push([firstByte, body]);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.fail(error.message, true, error.reasonCode);
    }
  };

  private onConnect(firstByte: number, body: Buffer): void {
    // [MQTT-3.1.0-1]: the first packet is a CONNECT.
    if (firstByte >> 4 !== PacketType.CONNECT) throw new ProtocolError(`packet type ${firstByte >> 4} before CONNECT`);
    // The level after the protocol name, known before the rest is read: a level 5 CONNECT that is refused gets a CONNACK of level 5.
    if (body.length >= 2) this.level = body[2 + body.readUInt16BE(0)] ?? 4;
    this.connect = readConnect(firstByte, body);
    if (this.level === 5) checkConnect5(this.connect);
    this.state = AUTHENTICATING;
    // Packets may follow the CONNECT at once; those of this chunk wait in `deferred`, the rest in the socket.
    this.socket.pause();
    this.host.authenticate(this).then(
      (result) => this.authenticated(result),
      (error: Error) => this.fail(error.message),
    );
  }

  private authenticated(result: GatewaySession | ConnectRefusal): void {
    if (this.state === CLOSED) return;
    const v5 = this.connect!.v5;
    if (typeof result === 'string') {
      // [MQTT-3.2.2-5], MQTT 5 3.2.2.2: a CONNACK with a non-zero code, then the server closes.
      this.state = CLOSED;
      this.reader.stop();
      const codes = REFUSAL_CODES.connect[result];
      this.socket.end(v5 ? connack5(codes.v5) : connack(codes.v3));
      return;
    }
    this.session = result;
    this.state = CONNECTED;
    const limits = { receiveMaximum: RECEIVE_MAXIMUM, maximumPacketSize: this.maxPacketBytes };
    const kept = result.keptSubscription !== undefined;
    this.socket.write(v5 ? connack5(ReasonCode.SUCCESS, acceptedProperties(v5, limits, result.gatewayId, this.cleanSession), kept) : connack(0, kept));
    this.host.connected(this);
    const keepAlive = this.connect!.keepAlive;
    // [MQTT-3.1.2-24]: no packet within one and a half times the keep alive closes the connection.
    if (keepAlive > 0) this.keepAlive.watch(keepAlive * 1500);
    const deferred = this.deferred;
    this.deferred = [];
    for (const [firstByte, body] of deferred) {
      if (this.state !== CONNECTED) return;
      this.onPacket(firstByte, body);
    }
    this.resume();
  }

  private onConnectedPacket(firstByte: number, body: Buffer): void {
    if (firstByte >> 4 === PacketType.PUBLISH) return this.onPublish(firstByte, body);
    onControlPacket(firstByte, body, this.level, this.control);
  }

  /** What the packets other than PUBLISH do to this connection (control-packets.ts reads them). */
  private readonly control: ControlHandlers = {
    ping: () => this.socket.write(PINGRESP),
    write: (packet) => this.write(packet),
    subscribe: (body) => this.write(subscribeAnswer(body, this.level, (filter, qos) => this.host.subscribe(this, filter, qos))),
    unsubscribe: (body) => {
      const { filters, answer } = unsubscribeAnswer(body, this.level, this.session!.commandsTopic);
      for (const filter of filters) this.host.unsubscribe(this, filter);
      this.write(answer);
    },
    disconnect: (discardWill) => {
      this.graceful = discardWill;
      this.reader.stop();
      this.socket.end();
    },
    acknowledged: (packetId) => this.host.acknowledged(this, packetId),
  };

  private onPublish(firstByte: number, body: Buffer): void {
    const qos = (firstByte >> 1) & 0x03;
    // [MQTT-3.3.1-4]: QoS 3 is malformed.
    if (qos === 3) throw new ProtocolError('PUBLISH with QoS 3');
    const v5 = this.level === 5;
    if (v5) checkPublishFlags5(firstByte);
    if (body.length < 2) throw new ProtocolError('PUBLISH without a topic');
    const topicEnd = 2 + body.readUInt16BE(0);
    let payloadStart = topicEnd + (qos > 0 ? 2 : 0);
    if (payloadStart > body.length) throw new ProtocolError('PUBLISH shorter than its topic and packet identifier');
    const packetId = qos > 0 ? body.readUInt16BE(topicEnd) : 0;
    // [MQTT-2.3.1-1]: a QoS 1 or 2 PUBLISH carries a non-zero packet identifier; 0 is a protocol
    // violation, so the connection closes ([MQTT-4.8.0-1]): no PUBACK, nothing stored.
    if (qos > 0 && packetId === 0) {
      this.host.protocolViolation(this, qos);
      return this.fail(`QoS ${qos} PUBLISH with packet identifier 0`, false, REFUSAL_CODES.close.packet_identifier_zero);
    }
    if (v5) {
      payloadStart = publishPayloadStart(body, payloadStart);
      // MQTT 5 3.3.2.1: only a Topic Alias (refused above) stands in for an empty topic name.
      if (topicEnd === 2) throw new ProtocolError('PUBLISH with an empty topic name and no Topic Alias', ReasonCode.PROTOCOL_ERROR);
    }
    const session = this.session!;
    if (session.topicBytes.compare(body, 2, topicEnd) !== 0) {
      // Its second topic: the outcome of its commands (docs/commands.md).
      if (session.responsesTopicBytes.compare(body, 2, topicEnd) === 0) return this.onCommandResponse(qos, packetId, body.subarray(payloadStart));
      // [MQTT-3.3.5-2]: a PUBLISH the server does not authorize is either acknowledged or the
      // connection is closed; we close, so a misconfigured gateway notices at once.
      const topic = body.toString('utf8', 2, topicEnd);
      return this.refusePublish(qos, packetId, topic, `topic ${JSON.stringify(topic)} is not ${session.topic}`, 'foreign_topic');
    }
    const payloadBytes = body.length - payloadStart;
    if (payloadBytes > this.host.maxPayloadBytes) {
      return this.refusePublish(qos, packetId, session.topic, `payload of ${payloadBytes} bytes exceeds ${this.host.maxPayloadBytes}`, 'payload_too_large');
    }
    if (qos > 0) {
      // MQTT 5 3.3.4, 4.9: more unacknowledged messages than CONNACK's Receive Maximum is refused with 0x93.
      if (v5 && this.inFlight >= RECEIVE_MAXIMUM) return this.fail(`more than ${RECEIVE_MAXIMUM} messages unacknowledged`, true, REFUSAL_CODES.close.receive_maximum);
      this.inFlight++;
    }
    // Retain is ignored at levels 3 and 4: nobody can subscribe, so a retained copy could never be
    // delivered (deviates from [MQTT-3.3.1-5] with no observable difference).
    this.pending++;
    if (this.pending >= MAX_PENDING_PER_CONNECTION) this.pause();
    this.host.writer.submit(session.gatewayId, body.subarray(payloadStart), this.onStored, tokenOf(qos, packetId));
  }

  /**
   * A gateway's report of a command's outcome: acknowledged (PUBACK, or PUBREC for QoS 2) once the
   * store has it or dropped it; not stored, the connection closes so that it is sent again.
   */
  private onCommandResponse(qos: number, packetId: number, payload: Buffer): void {
    if (payload.length > this.host.maxPayloadBytes) {
      this.host.publishRefused(this, 'command-responses', `payload of ${payload.length} bytes exceeds ${this.host.maxPayloadBytes}`);
      return this.fail('payload over the limit', false);
    }
    this.host.commandResponse(this, Buffer.from(payload)).then(
      () => {
        if (qos > 0 && this.state === CONNECTED) this.write(acknowledgement(qos === 1 ? PacketType.PUBACK : PacketType.PUBREC, packetId));
      },
      (error: Error) => this.fail(error.message),
    );
  }

  /**
   * The ingest writer's answer for one message. Committed: a QoS 1 message is acknowledged with
   * PUBACK ([MQTT-4.3.2-2]), a QoS 2 one with PUBREC, in the order they arrived ([MQTT-4.6.0-2]:
   * the writer answers in order). Not stored: no acknowledgement, and the connection closes so
   * that the gateway sends the message again when it reconnects ([MQTT-4.4.0-1]).
   */
  private readonly onStored = (error: Error | null, token: number): void => {
    this.pending--;
    const qos = token >>> 16;
    if (qos > 0) this.inFlight--;
    if (this.state === CLOSED || this.closing) return;
    if (error) return this.fail(error.message, true, REFUSAL_CODES.close.not_stored);
    if (qos > 0) this.acks.add(qos, token & 0xffff);
    if (this.lastWords && this.pending === 0) return this.closeWith(this.lastWords);
    if (this.paused && this.pending < MAX_PENDING_PER_CONNECTION / 2) this.resume();
  };

  /**
   * A PUBLISH to a topic not the gateway's, or over the payload limit: nothing is stored, and the
   * connection closes, so that a misconfigured gateway notices at once ([MQTT-3.3.5-2] lets the
   * server close). At level 5 it is told why first: a PUBACK or PUBREC with the reason code
   * (MQTT 5 3.4.2.1), then DISCONNECT with it, once the messages before it are acknowledged in
   * order ([MQTT-4.6.0-2]).
   */
  private refusePublish(qos: number, packetId: number, topic: string, reason: string, kind: keyof typeof REFUSAL_CODES.publish): void {
    this.host.publishRefused(this, topic, reason);
    if (this.level !== 5) return this.fail(kind === 'foreign_topic' ? `topic ${JSON.stringify(topic)} refused` : 'payload over the limit', false);
    const code = REFUSAL_CODES.publish[kind];
    const ack = qos > 0 ? acknowledgement5(qos === 1 ? PacketType.PUBACK : PacketType.PUBREC, packetId, code) : Buffer.alloc(0);
    this.reader.stop();
    this.lastWords = Buffer.concat([ack, disconnect5(code)]);
    if (this.pending === 0) this.closeWith(this.lastWords);
  }

  private write(packet: Buffer): void {
    if (this.closing) return;
    if (!this.socket.write(packet) && this.socket.writableLength > MAX_UNSENT_BYTES) {
      // The gateway does not read its acknowledgements: stop reading its messages until it does.
      this.pause();
      this.socket.once('drain', () => this.resume());
    }
  }

  private pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  private resume(): void {
    if (this.stopped) {
      this.socket.resume();
      return;
    }
    if (this.state !== CONNECTED || this.pending >= MAX_PENDING_PER_CONNECTION || this.socket.writableLength > MAX_UNSENT_BYTES) return;
    this.paused = false;
    this.socket.resume();
  }

  private onClose(): void {
    const wasConnected = this.state === CONNECTED;
    this.state = CLOSED;
    this.keepAlive.stop();
    this.reader.stop();
    this.deferred = [];
    if (!wasConnected) return;
    if (this.errorReason) this.host.log.info({ gateway_id: this.session?.gatewayId, reason: this.errorReason }, 'gateway connection closed on error');
    // [MQTT-3.1.2-8]: a connection closed without DISCONNECT publishes its will.
    this.host.disconnected(this, this.graceful ? undefined : this.connect?.will);
  }
}

