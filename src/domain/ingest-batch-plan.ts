import { Outcome, type BatchResult, type IngestMessage } from './ingest.js';
import { plainTexts } from './events.js';
import type { CreatedWindow } from './payload-limits.js';
import { COLUMN, parsePayload, type EventValues, type GatewayReport, type ParsedMessage } from './payload.js';

/**
 * The store-independent part of a group commit, shared by both stores: parse the messages, and,
 * once the store has touched each gateway, decide each message's outcome and stamp its events.
 * A store's `ingest.commit` runs: planBatch → (touch gateways) → settleBatch → (store reports,
 * dead letters and events, all in one transaction).
 */

/** The gateway fields an event is stamped with at ingest (docs/gateways-mqtt.md "Payloads"). */
export interface IngestGateway {
  customer_id: string;
  usecase: string;
  station: string;
}

/** Stands for a quarantined message, which is kept as it came, never parsed. */
const NOT_PARSED: ParsedMessage = { valid: false, reason: 'quarantined' };

export interface BatchPlan {
  batch: IngestMessage[];
  parsed: ParsedMessage[];
  /** Once per gateway: the time of its newest message in the batch (its `last_message`). */
  lastMessage: Map<string, number>;
}

/** What a store writes in the transaction once the outcomes are known. */
export interface SettledBatch {
  result: BatchResult;
  /** The events to insert (ON CONFLICT DO NOTHING: an event already stored is skipped), customer and gateway slots filled. */
  events: EventValues[];
  /** Reports of live gateways, in message order. */
  reports: { gatewayId: string; report: GatewayReport; at: number }[];
  /** Indexes of the quarantined messages to keep as dead letters (not copies). */
  deadLetters: number[];
}

export function emptyBatchResult(size: number): BatchResult {
  return { outcomes: new Array<Outcome>(size).fill(Outcome.STORED), reasons: new Array(size), events: 0, duplicates: 0, reports: 0, devices: 0 };
}

/** Parses the batch (parsePayload never throws: one message's trouble stays that message's). */
export function planBatch(batch: IngestMessage[], window?: CreatedWindow): BatchPlan {
  const parsed = batch.map((message) => (message.quarantine ? NOT_PARSED : parsePayload(message.payload, message.receivedAt, window)));
  return planParsed(batch, parsed);
}

/** The plan of messages parsed already (a retry of one message alone). */
export function planParsed(batch: IngestMessage[], parsed: ParsedMessage[]): BatchPlan {
  const lastMessage = new Map<string, number>();
  for (const message of batch) {
    if (!(message.receivedAt <= (lastMessage.get(message.gatewayId) ?? -1))) lastMessage.set(message.gatewayId, message.receivedAt);
  }
  return { batch, parsed, lastMessage };
}

/** Outcomes and rows of the plan, given each gateway as touched (undefined: gone or deleted). */
export function settleBatch(plan: BatchPlan, gateways: ReadonlyMap<string, IngestGateway | undefined>): SettledBatch {
  const { batch, parsed } = plan;
  const result = emptyBatchResult(batch.length);
  const settled: SettledBatch = { result, events: [], reports: [], deadLetters: [] };
  // Whether each gateway's texts are plain (events.ts, `plain_text`), tested once per batch.
  const plainGateways = new Map<string, boolean>();
  for (let i = 0; i < batch.length; i++) {
    const { gatewayId, receivedAt, quarantine } = batch[i]!;
    const gateway = gateways.get(gatewayId);
    const message = parsed[i]!;
    if (quarantine) {
      // Kept whether or not the gateway still exists: it is evidence for the operator.
      if (!quarantine.copy) settled.deadLetters.push(i);
      result.outcomes[i] = Outcome.QUARANTINED;
    } else if (!gateway) {
      result.outcomes[i] = Outcome.GATEWAY_GONE;
      result.reasons[i] = `gateway ${gatewayId} is deleted`;
    } else if (!message.valid) {
      result.outcomes[i] = Outcome.INVALID;
      result.reasons[i] = message.reason;
    } else {
      for (const report of message.reports) settled.reports.push({ gatewayId, report, at: receivedAt });
      let plainGateway = plainGateways.get(gatewayId);
      if (plainGateway === undefined) plainGateways.set(gatewayId, (plainGateway = plainTexts([gatewayId, gateway.usecase, gateway.station])));
      for (const values of message.events) {
        values[COLUMN.customer_id] = gateway.customer_id;
        values[COLUMN.gateway_id] = gatewayId;
        values[COLUMN.gateway_usecase] = gateway.usecase;
        values[COLUMN.gateway_station] = gateway.station;
        if (!plainGateway) values[COLUMN.plain_text] = null;
        settled.events.push(values);
      }
    }
  }
  return settled;
}

/** Adds the counts of a retry of message `i` alone to the batch's result. */
export function mergeSingle(result: BatchResult, i: number, single: BatchResult): void {
  result.outcomes[i] = single.outcomes[0]!;
  result.reasons[i] = single.reasons[0];
  result.events += single.events;
  result.duplicates += single.duplicates;
  result.reports += single.reports;
  result.devices += single.devices;
  for (const customer of single.unannounced ?? []) {
    result.unannounced ??= [];
    if (!result.unannounced.includes(customer)) result.unannounced.push(customer);
  }
}

/** The customers of the events, each once (a batch has few: usually one). */
export function customersOf(events: readonly EventValues[]): string[] {
  const customers = new Set<string>();
  for (const values of events) customers.add(values[COLUMN.customer_id] as string);
  return [...customers];
}
