import type { TLSSocket } from 'node:tls';
import type { IngestLog, IngestWriter } from './ingest.js';
import {
  acceptedProperties,
  acknowledgement5,
  checkConnect5,
  checkPublishFlags5,
  connack5,
  disconnect5,
  publishPayloadStart,
  readDisconnect5,
  readSubscribe5,
  readUnsubscribe5,
  subscriptionRefusal5,
  unsuback5,
} from './mqtt5.js';
import {
  PINGRESP,
  PacketReader,
  PacketType,
  ProtocolError,
  acknowledgement,
  connack,
  readConnect,
  readTopicFilters,
  suback,
  type ConnectPacket,
  type PacketRefusal,
} from './packets.js';
import { peerCertificateOf } from './peer-certificate.js';
import { REFUSAL_CODES, ReasonCode, type CloseReason, type ConnectRefusal } from './refusals.js';

// One gateway's MQTT connection, from its CONNECT to its close: the whole protocol a publishing
// gateway needs ([MQTT-3.1] to [MQTT-3.14]; MQTT 5 3.1 to 3.14 at level 5, where every refusal
// also carries its reason code: refusals.ts), read straight off the TLS socket, and the one
// subscription it may make, to its commands (the host's, src/mqtt/commands/). Each PUBLISH goes to
// the ingest writer as a view of the bytes it arrived in; its PUBACK is written once the writer's
// transaction committed, coalesced with the others of that commit into one write per connection.

/** [MQTT-3.9.3]: the SUBACK return code of a refused filter at levels 3 and 4. */
const SUBACK_FAILURE = 0x80;

/** The gateway behind a connection, known from its certificate once authenticated. */
export interface GatewaySession {
  gatewayId: string;
  topic: string;
  /** `topic` as bytes: a PUBLISH's topic is compared without decoding it. */
  topicBytes: Buffer;
  /** The serial of the certificate it connected with (lower-case hex): a revocation of it closes the connection. */
  serial: string;
  /** The one topic filter it may subscribe to: its commands (docs/commands.md). */
  commandsTopic: string;
  /** Where it reports its commands' outcome, as bytes (compared like `topicBytes`). */
  responsesTopicBytes: Buffer;
}

/** What a connection needs of the broker. */
export interface ConnectionHost {
  log: IngestLog;
  writer: Pick<IngestWriter, 'submit'>;
  maxPayloadBytes: number;
  /** The session of the certificate's gateway, or why it is refused (logged and counted there; refusals.ts has its CONNACK code). */
  authenticate(connection: GatewayConnection): Promise<GatewaySession | ConnectRefusal>;
  /** CONNACK 0 went out. */
  connected(connection: GatewayConnection): void;
  /** A connected gateway's connection closed. */
  disconnected(connection: GatewayConnection): void;
  /** A PUBLISH was refused: foreign topic or payload over the limit (the connection closes). */
  publishRefused(connection: GatewayConnection, topic: string, reason: string): void;
  /** A QoS 1 or 2 PUBLISH with packet identifier 0 (the connection closes). */
  protocolViolation(connection: GatewayConnection, qos: number): void;
  /** A packet refused on its header alone (the connection closes). */
  packetRefused(connection: GatewayConnection, refusal: PacketRefusal): void;
  /** A SUBSCRIBE's filter and its requested QoS: the SUBACK return code, the QoS granted or 0x80 ([MQTT-3.9.3]). */
  subscribe(connection: GatewayConnection, filter: string, qos: number): number;
  /** An UNSUBSCRIBE's filter. */
  unsubscribe(connection: GatewayConnection, filter: string): void;
  /** A PUBACK of a message the broker sent (a command). */
  acknowledged(connection: GatewayConnection, packetId: number): void;
  /** A PUBLISH on the command-responses topic; resolves once handled, rejects when it was not stored (no acknowledgement then). */
  commandResponse(connection: GatewayConnection, payload: Buffer): Promise<void>;
}

const CONNECTING = 0;
const AUTHENTICATING = 1;
const CONNECTED = 2;
const CLOSED = 3;

/** Messages of one connection waiting for their commit before its socket is read again: bounds what one gateway can queue. */
const MAX_PENDING_PER_CONNECTION = 4096;
/** Bytes written and not yet taken by the peer before its socket is read again. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/**
 * QoS 1 messages an MQTT 5 gateway may have unacknowledged (CONNACK's Receive Maximum, MQTT 5
 * 3.2.2.3.3): the messages one connection may have waiting for their commit.
 */
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
  private acks: Buffer | undefined;
  private ackBytes = 0;
  private pending = 0;
  /** QoS 1 and 2 messages not acknowledged yet (pending counts QoS 0 too). */
  private inFlight = 0;
  /** The connection ends once its messages before a refused PUBLISH are acknowledged: then these bytes go out last (MQTT 5). */
  private lastWords: Buffer | undefined;
  /** Its last packet is on its way: nothing more is written. */
  private closing = false;
  private paused = false;
  private lastActivity = 0;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private graceful = false;
  private stopped = false;
  /** Why the connection closed, when the server closed it on an error; logged once at close. */
  private errorReason: string | undefined;

  constructor(
    readonly socket: TLSSocket,
    private readonly host: ConnectionHost,
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

  closed(): boolean {
    return this.state === CLOSED;
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
    this.flushAcks();
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
    this.lastActivity = performance.now();
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
    this.flushAcks();
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
    this.socket.write(v5 ? connack5(ReasonCode.SUCCESS, acceptedProperties(v5, limits, result.gatewayId)) : connack(0));
    this.host.connected(this);
    const keepAlive = this.connect!.keepAlive;
    // [MQTT-3.1.2-24]: no packet within one and a half times the keep alive closes the connection.
    if (keepAlive > 0) this.watchKeepAlive(keepAlive * 1500);
    const deferred = this.deferred;
    this.deferred = [];
    for (const [firstByte, body] of deferred) {
      if (this.state !== CONNECTED) return;
      this.onPacket(firstByte, body);
    }
    this.resume();
  }

  private watchKeepAlive(limitMs: number): void {
    this.lastActivity = performance.now();
    const check = () => {
      const idle = performance.now() - this.lastActivity;
      if (idle >= limitMs) return this.fail(`no packet within ${limitMs / 1000} s (keep alive)`, true, REFUSAL_CODES.close.keep_alive);
      this.keepAliveTimer = setTimeout(check, limitMs - idle + 1);
    };
    this.keepAliveTimer = setTimeout(check, limitMs);
  }

  private onConnectedPacket(firstByte: number, body: Buffer): void {
    const type = firstByte >> 4;
    if (type === PacketType.PUBLISH) return this.onPublish(firstByte, body);
    const flags = firstByte & 0x0f;
    switch (type) {
      case PacketType.PINGREQ:
        this.socket.write(PINGRESP);
        return;
      case PacketType.PUBREL:
        // [MQTT-3.6.1-1]: flags 0010. The message was stored at its PUBLISH: release is only acknowledged.
        if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed PUBREL');
        this.write(acknowledgement(PacketType.PUBCOMP, body.readUInt16BE(0)));
        return;
      case PacketType.SUBSCRIBE:
        if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed SUBSCRIBE');
        return this.onSubscribe(body);
      case PacketType.UNSUBSCRIBE:
        if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed UNSUBSCRIBE');
        return this.onUnsubscribe(body);
      case PacketType.DISCONNECT:
        if (flags !== 0) throw new ProtocolError('malformed DISCONNECT');
        // [MQTT-3.14.4-3]: the will is discarded; at level 5 unless the reason is 0x04 "with will
        // message" or an error (MQTT 5 3.1.2.5, 3.14.4: only 0x00 discards it).
        this.graceful = this.level !== 5 || readDisconnect5(body) === ReasonCode.SUCCESS;
        this.reader.stop();
        this.socket.end();
        return;
      case PacketType.PUBACK:
        // [MQTT-4.3.2]: the gateway has the command of this packet identifier.
        if (body.length < 2) throw new ProtocolError('malformed PUBACK');
        this.host.acknowledged(this, body.readUInt16BE(0));
        return;
      case PacketType.PUBREC:
      case PacketType.PUBCOMP:
        // Acknowledgements of QoS 2 messages, which the broker never sends: nothing to do.
        return;
      default:
        // A second CONNECT ([MQTT-3.1.0-2]) or a packet only a server sends.
        throw new ProtocolError(`unexpected packet type ${type}`, ReasonCode.PROTOCOL_ERROR);
    }
  }

  private onSubscribe(body: Buffer): void {
    const packetId = body.readUInt16BE(0);
    if (this.level !== 5) {
      const filters = readTopicFilters(body, true);
      // Each filter is followed by its requested QoS (readTopicFilters checked it).
      let at = 2;
      const codes = filters.map((filter) => {
        at += 2 + Buffer.byteLength(filter) + 1;
        return this.host.subscribe(this, filter, body[at - 1]!);
      });
      // [MQTT-3.8.4-3] / [MQTT-3.9.3-2]: one return code per filter, 0x80 for a refused one; the connection stays open.
      this.write(suback(packetId, codes, this.level));
      return;
    }
    // MQTT 5 3.9.3: a reason code per filter, saying why one is refused; the connection stays open.
    // Subscription identifiers are not supported (the CONNACK says so), so with one nothing is granted.
    const { filters, qos, subscriptionIdentifier } = readSubscribe5(body);
    const codes = filters.map((filter, i) => {
      const code = subscriptionIdentifier ? SUBACK_FAILURE : this.host.subscribe(this, filter, qos[i]!);
      return code === SUBACK_FAILURE ? subscriptionRefusal5(filter, subscriptionIdentifier) : code;
    });
    this.write(suback(packetId, codes, 5));
  }

  private onUnsubscribe(body: Buffer): void {
    const packetId = body.readUInt16BE(0);
    const filters = this.level === 5 ? readUnsubscribe5(body) : readTopicFilters(body, false);
    for (const filter of filters) this.host.unsubscribe(this, filter);
    if (this.level !== 5) return this.write(acknowledgement(PacketType.UNSUBACK, packetId));
    // MQTT 5 3.11.3: a reason code per filter; only the command topic can have had a subscription.
    const codes = filters.map((filter) => (filter === this.session!.commandsTopic ? ReasonCode.SUCCESS : ReasonCode.NO_SUBSCRIPTION_EXISTED));
    this.write(unsuback5(packetId, codes));
  }

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
    if (qos > 0) {
      this.acks ??= Buffer.allocUnsafe(4 * 64);
      if (this.ackBytes + 4 > this.acks.length) {
        const larger = Buffer.allocUnsafe(this.acks.length * 2);
        this.acks.copy(larger, 0, 0, this.ackBytes);
        this.acks = larger;
      }
      const at = this.ackBytes;
      this.acks[at] = (qos === 1 ? PacketType.PUBACK : PacketType.PUBREC) << 4;
      this.acks[at + 1] = 2;
      this.acks[at + 2] = (token >> 8) & 0xff;
      this.acks[at + 3] = token & 0xff;
      if (at === 0) process.nextTick(this.flushAcks);
      this.ackBytes = at + 4;
    }
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

  private readonly flushAcks = (): void => {
    const bytes = this.ackBytes;
    if (bytes === 0 || this.closing) return;
    const acks = this.acks!;
    this.ackBytes = 0;
    this.acks = undefined;
    if (this.state === CLOSED) return;
    this.write(bytes === acks.length ? acks : acks.subarray(0, bytes));
  };

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
    clearTimeout(this.keepAliveTimer);
    this.reader.stop();
    this.deferred = [];
    if (!wasConnected) return;
    if (this.errorReason) this.host.log.info({ gateway_id: this.session?.gatewayId, reason: this.errorReason }, 'gateway connection closed on error');
    const will = this.connect?.will;
    // [MQTT-3.1.2-8]: a connection closed without DISCONNECT publishes its will.
    if (will && !this.graceful) {
      const session = this.session!;
      if (will.topic !== session.topic) this.host.publishRefused(this, will.topic, `will topic ${JSON.stringify(will.topic)} is not ${session.topic}`);
      else if (will.payload.length > this.host.maxPayloadBytes) this.host.publishRefused(this, will.topic, `will payload of ${will.payload.length} bytes exceeds ${this.host.maxPayloadBytes}`);
      else this.host.writer.submit(session.gatewayId, will.payload, NO_ACK);
    }
    this.host.disconnected(this);
  }
}

const NO_ACK = (): void => {};
