import { randomUUID } from 'node:crypto';
import { EVENT_COLUMNS, type EventColumn } from '../store/event-rows.js';

/**
 * What a gateway publishes (DESIGN.md "Events"): one event object or an array of them, each with
 * the fields of spec 2.2 except the gateway_* ones. A `class: "gateway"` object reports the
 * gateway's own model, manufacturer, firmware and type instead of being stored.
 * Pure functions: no SQL, so the same code runs in the broker thread or a writer thread.
 */

/**
 * An event's values in INSERT order: customer_id, then EVENT_COLUMNS. customer_id and the
 * gateway_* slots are filled at commit, from the gateway record.
 */
export type EventValues = (string | number | null)[];

/** What a `class: "gateway"` message reports; absent fields stay as stored. */
export interface GatewayReport {
  model?: string;
  manufacturer?: string;
  firmware?: string;
  type?: 'stationary' | 'mobile';
}

export type ParsedMessage =
  | { valid: true; events: EventValues[]; reports: GatewayReport[] }
  | { valid: false; reason: string };

const column = (name: EventColumn) => 1 + EVENT_COLUMNS.indexOf(name);
/** Positions in EventValues of the slots ingest fills in or defaults. */
export const COLUMN = {
  customer_id: 0,
  id: column('id'),
  class: column('class'),
  type: column('type'),
  created: column('created'),
  gateway_id: column('gateway_id'),
  gateway_usecase: column('gateway_usecase'),
  gateway_station: column('gateway_station'),
} as const;

const STRING_FIELDS: EventColumn[] = ['scan_code', 'scan_decode_symbology', 'device_id', 'device_firmware'];
const NUMBER_FIELDS: EventColumn[] = ['scan_duration', 'device_battery', 'device_temperature', 'metrics_worker_steps'];
const STRING_SLOTS = STRING_FIELDS.map((name) => [name, column(name)] as const);
const NUMBER_SLOTS = NUMBER_FIELDS.map((name) => [name, column(name)] as const);
// Spec 2.2 `class`; "gateway" is the report, never stored.
const EVENT_CLASSES = new Set(['device', 'event', 'job_config', 'device_config']);
const EVENT_TYPES = new Set(['scan', 'telemetry']);
const GATEWAY_TYPES = new Set(['stationary', 'mobile']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class InvalidPayload extends Error {}

const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : String(JSON.stringify(value)).slice(0, 60));

function fail(where: string, field: string, expected: string, value: unknown): never {
  throw new InvalidPayload(`${where}"${field}" must be ${expected}, got ${show(value)}`);
}

/** Parses and validates one MQTT payload; `receivedAt` is the default `created`. Never throws. */
export function parsePayload(payload: Uint8Array, receivedAt: number): ParsedMessage {
  // A Buffer from the broker, or a plain Uint8Array after crossing to a worker thread.
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { valid: false, reason: `payload is not JSON: ${(error as Error).message}` };
  }
  const events: EventValues[] = [];
  const reports: GatewayReport[] = [];
  try {
    if (Array.isArray(body)) {
      for (let i = 0; i < body.length; i++) parseObject(body[i], `element ${i}: `, receivedAt, events, reports);
    } else {
      parseObject(body, '', receivedAt, events, reports);
    }
  } catch (error) {
    if (error instanceof InvalidPayload) return { valid: false, reason: error.message };
    throw error;
  }
  return { valid: true, events, reports };
}

function parseObject(value: unknown, where: string, receivedAt: number, events: EventValues[], reports: GatewayReport[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidPayload(`${where}expected an event object, got ${show(value)}`);
  }
  const object = value as Record<string, unknown>;
  if (object.class === 'gateway') reports.push(parseReport(object, where));
  else events.push(parseEvent(object, where, receivedAt));
}

// null counts as absent: devices often serialise missing optional fields that way.
function parseEvent(object: Record<string, unknown>, where: string, receivedAt: number): EventValues {
  const values: EventValues = new Array(1 + EVENT_COLUMNS.length).fill(null);
  const { id, class: eventClass, type, created } = object;
  if (id == null) values[COLUMN.id] = randomUUID();
  else if (typeof id === 'string' && UUID.test(id)) values[COLUMN.id] = id;
  else fail(where, 'id', 'a UUID', id);
  if (eventClass == null) values[COLUMN.class] = 'event';
  else if (typeof eventClass === 'string' && EVENT_CLASSES.has(eventClass)) values[COLUMN.class] = eventClass;
  else fail(where, 'class', 'one of event, device, gateway, job_config, device_config', eventClass);
  if (typeof type === 'string' && EVENT_TYPES.has(type)) values[COLUMN.type] = type;
  else fail(where, 'type', 'scan or telemetry', type);
  if (created == null) values[COLUMN.created] = receivedAt;
  else if (typeof created === 'number' && Number.isSafeInteger(created) && created >= 0) values[COLUMN.created] = created;
  else fail(where, 'created', 'milliseconds since the epoch (a non-negative integer)', created);
  for (const [name, slot] of STRING_SLOTS) {
    const field = object[name];
    if (typeof field === 'string') values[slot] = wellFormed(field);
    else if (field != null) fail(where, name, 'a string', field);
  }
  for (const [name, slot] of NUMBER_SLOTS) {
    const field = object[name];
    if (typeof field === 'number' && Number.isFinite(field)) values[slot] = field;
    else if (field != null) fail(where, name, 'a number', field);
  }
  return values;
}

/**
 * The string with each lone surrogate (JSON allows `"\ud800"`) replaced by U+FFFD. Stored as
 * they are, they would become bytes that are not UTF-8, and the event list, whose JSON SQLite
 * writes from the stored bytes, would carry them to clients that refuse such text.
 */
function wellFormed(text: string): string {
  const string = text as string & { isWellFormed(): boolean; toWellFormed(): string }; // ES2024, in Node 20
  return string.isWellFormed() ? text : string.toWellFormed();
}

// As for gateway fields set over HTTP: shown in tables and tab-separated output.
const GATEWAY_TEXT = /^[^\u0000-\u001f\u007f]{1,200}$/;

function parseReport(object: Record<string, unknown>, where: string): GatewayReport {
  const report: GatewayReport = {};
  for (const name of ['model', 'manufacturer', 'firmware'] as const) {
    const field = object[name];
    if (typeof field === 'string' && GATEWAY_TEXT.test(field)) report[name] = field;
    else if (field != null) fail(where, name, 'a string of 1 to 200 characters without control characters', field);
  }
  const type = object.type;
  if (typeof type === 'string' && GATEWAY_TYPES.has(type)) report.type = type as GatewayReport['type'];
  else if (type != null) fail(where, 'type', 'stationary or mobile', type);
  return report;
}
