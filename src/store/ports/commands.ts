import type { AuditEntry } from '../../domain/audit.js';
import type { CommandRecord, ResponseStatus } from '../../domain/commands.js';
import type { CreatedIdKey } from '../../domain/page-token.js';
import type { WriteFailure } from './write-failure.js';

export type { CommandRecord };

/** A command to store: QUEUED from its creation. `parameters` is JSON text. */
export interface NewCommand {
  id: string;
  gateway_id: string;
  device_id: string | null;
  name: string;
  parameters: string;
  expires_at: number;
}

/** A gateway's PUBACK of one of its commands. */
export interface CommandAck {
  gateway_id: string;
  id: string;
}

/** What a claim asks for one gateway (CommandRepository.claim). */
export interface ClaimRequest {
  gateway_id: string;
  exclude: number[];
  limit: number;
}

/** A gateway's report of one of its commands' outcome. */
export interface CommandOutcome {
  gateway_id: string;
  id: string;
  status: ResponseStatus;
  details: string | null;
}

/** A cancel: the canceled command, `missing`, or the command that is no longer QUEUED (its status as stored now). */
export type CancelOutcome = CommandRecord | 'missing' | { final: CommandRecord };

/** A gateway's response: the completed command, `unknown` (no command of this gateway has the id) or `final` (too late: expired, canceled, completed). */
export type ResponseOutcome = CommandRecord | 'unknown' | 'final';

/** A write of command delivery as it crosses to the thread that runs it (SQLite, docs/commands.md "Delivery"): one method's call. */
export type CommandWrite =
  | { kind: 'create'; customerId: string; commands: NewCommand[]; now: number; audit: AuditEntry[] }
  | { kind: 'claim'; requests: ClaimRequest[]; now: number }
  | { kind: 'reclaim'; gatewayId: string; ids: string[]; now: number }
  | { kind: 'delivered'; acks: CommandAck[]; now: number; audit: boolean }
  | { kind: 'respond'; responses: CommandOutcome[]; now: number; audit: boolean }
  | { kind: 'expire'; now: number; limit: number };

/** Each write's result, or why it failed and the driver's code (its own savepoint rolled back; the others of its group stand). */
export type CommandWriteResult = { result: unknown } | { error: WriteFailure };

/** The results of a group of writes run together, and the webhooks given `command.status` messages (to wake once committed). */
export interface CommandWritesDone {
  results: CommandWriteResult[];
  told: string[];
}

/** Runs a group of delivery writes in one transaction elsewhere: `serve` hands in the ingest writer thread's. */
export type CommandWriteRoute = (writes: CommandWrite[]) => Promise<CommandWritesDone>;

/** Thrown by createAll when some gateways are not live gateways of the customer: nothing is stored. */
export class UnknownGateways extends Error {
  constructor(readonly gatewayIds: string[]) {
    super(`no such gateway: ${gatewayIds.join(', ')}`);
    this.name = 'UnknownGateways';
  }
}

/** Gateway ids per `commands-queued` signal: 150 ids of 36 characters stay well within NOTIFY's 8,000 bytes. */
export const GATEWAYS_PER_COMMAND_SIGNAL = 150;

/**
 * Commands to gateways (docs/commands.md). Every change of a command's status (its creation as
 * QUEUED included) is made by one of these methods, in one transaction with its audit entries and
 * a `command.status` message for each enabled webhook of the customer taking it; the webhooks told
 * are woken (`webhook-changed`) once it committed. A QUEUED or DELIVERED command past `expires_at`
 * reads as EXPIRED (domain/commands.ts statusAt) until `expire` or a cancel stores it.
 */
export interface CommandRepository {
  /** Stores all the commands or none (UnknownGateways when a gateway is not the customer's live one), then signals `commands-queued` for their gateways (the instance holding each delivers). */
  createAll(customerId: string, commands: NewCommand[], now: number, audit?: AuditEntry[]): Promise<CommandRecord[]>;
  byId(customerId: string, id: string): Promise<CommandRecord | undefined>;
  /** The gateway's commands older than `before` by (created, id) (all when null), newest first. */
  page(customerId: string, gatewayId: string, before: CreatedIdKey | null, limit: number): Promise<CommandRecord[]>;
  /** QUEUED and not expired at `now` -> CANCELED; an expired one is stored EXPIRED and returned as `final`. */
  cancel(customerId: string, id: string, now: number, audit?: AuditEntry): Promise<CancelOutcome>;
  /**
   * Each gateway's next commands to send, for several gateways in one transaction (a turn of the
   * event loop's claims): QUEUED, not expired at `now`, none of `exclude` (the `seq`s already sent
   * on its connection), in creation order, at most `limit`; each counted as one more attempt in the
   * same statement, so that a later send of it, here or by another instance after a restart, sets
   * DUP. Excluding rather than reading past a cursor: on PostgreSQL a command may commit after one
   * with a higher `seq`. One list per request, in their order.
   */
  claim(requests: ClaimRequest[], now: number): Promise<CommandRecord[][]>;
  /** Of these commands of the gateway (sent, not acknowledged in time), those still QUEUED and not expired at `now`, each counted one more attempt. */
  reclaim(gatewayId: string, ids: string[], now: number): Promise<CommandRecord[]>;
  /**
   * Gateways acknowledged these commands (PUBACK), each naming its own: QUEUED -> DELIVERED; returns
   * those that changed. With `audit`, each change's entry (domain/commands.ts deviceAuditEntry) is
   * written in its transaction: made by the store, since on SQLite these writes run in a thread of
   * their own, where no callback can follow.
   */
  delivered(acks: CommandAck[], now: number, audit?: boolean): Promise<CommandRecord[]>;
  /** Gateways' responses, in one transaction: QUEUED or DELIVERED, not expired -> SUCCEEDED or FAILED; one outcome per response, in their order. */
  respond(responses: CommandOutcome[], now: number, audit?: boolean): Promise<ResponseOutcome[]>;
  /** Stores EXPIRED on up to `limit` commands past their `expires_at`, each audited (`command.expired`); returns how many. */
  expire(now: number, limit: number): Promise<number>;
  /**
   * The gateway connected: with a clean session ([MQTT-3.1.2-6]) its stored subscription is
   * dropped and undefined returned; otherwise the QoS of its stored subscription, if any.
   */
  session(gatewayId: string, cleanSession: boolean): Promise<number | undefined>;
  /** The gateway subscribed to its command topic with this granted QoS (kept for its next persistent session). */
  subscribe(gatewayId: string, qos: number, now: number): Promise<void>;
  unsubscribe(gatewayId: string): Promise<void>;
  /**
   * SQLite only: `serve` routes the writes of delivery (claim, reclaim, delivered, respond, expire)
   * and creation (createAll) to the ingest writer thread, which runs them between its commits on
   * its own connection (runWrites there), so that they never wait for the write lock nor make
   * ingest wait for it. Without a route delivery's run in a thread of their own, creation on the
   * caller's. `undefined` drops the route.
   */
  routeWrites?(route: CommandWriteRoute | undefined): void;
  /** SQLite only, in the ingest writer thread: runs routed writes on this connection, in one transaction. */
  runWrites?(writes: CommandWrite[]): CommandWritesDone;
}
