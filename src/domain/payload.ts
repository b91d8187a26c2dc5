import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { EVENT_COLUMNS, STORED_EVENT_COLUMNS, type EventColumn } from './events.js';
import {
  DEFAULT_CREATED_WINDOW,
  MAX_DEVICE_TEXT_LENGTH,
  MAX_EVENTS_PER_MESSAGE,
  MAX_SCAN_CODE_LENGTH,
  structureProblem,
  tooManyEvents,
  type CreatedWindow,
} from './payload-limits.js';

/**
 * What a gateway publishes (docs/gateways-mqtt.md "Payloads"): one event object or an array of
 * them, without the gateway_* fields; a `class: "gateway"` object reports the gateway's model,
 * manufacturer, firmware and type instead of being stored. No SQL, so it runs in any thread.
 */

/**
 * An event's values in INSERT order (STORED_EVENT_COLUMNS). customer_id and the gateway_* slots
 * are filled at commit, from the gateway record.
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

const column = (name: (typeof STORED_EVENT_COLUMNS)[number]) => STORED_EVENT_COLUMNS.indexOf(name);
/** Positions in EventValues of the slots ingest fills in or defaults, and of those a device is kept from (devices.ts). */
export const COLUMN = {
  customer_id: 0,
  id: column('id'),
  class: column('class'),
  type: column('type'),
  created: column('created'),
  created_stamped: column('created_stamped'),
  plain_text: column('plain_text'),
  device_id: column('device_id'),
  device_battery: column('device_battery'),
  device_firmware: column('device_firmware'),
  device_temperature: column('device_temperature'),
  gateway_id: column('gateway_id'),
  gateway_usecase: column('gateway_usecase'),
  gateway_station: column('gateway_station'),
} as const;

// Each string field with its longest value in characters (payload-limits.ts).
const STRING_FIELDS: [EventColumn, number][] = [
  ['scan_code', MAX_SCAN_CODE_LENGTH],
  ['scan_decode_symbology', MAX_DEVICE_TEXT_LENGTH],
  ['device_id', MAX_DEVICE_TEXT_LENGTH],
  ['device_firmware', MAX_DEVICE_TEXT_LENGTH],
];
const NUMBER_FIELDS: EventColumn[] = ['scan_duration', 'device_battery', 'device_temperature', 'metrics_worker_steps'];
const STRING_SLOTS = STRING_FIELDS.map(([name, longest]) => [name, column(name), longest] as const);
const NUMBER_SLOTS = NUMBER_FIELDS.map((name) => [name, column(name)] as const);
// The stored values of `class`; "gateway" is the report, never stored.
const EVENT_CLASSES = new Set(['device', 'event', 'job_config', 'device_config']);
const EVENT_TYPES = new Set(['scan', 'telemetry']);
const GATEWAY_TYPES = new Set(['stationary', 'mobile']);
const BACKSLASH = 0x5c;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class InvalidPayload extends Error {}

/**
 * A value as a reason quotes it: strings cut to 60 characters, arrays and objects only named.
 * Never serialises a structure: one nested deep enough overflows the stack, one large enough
 * costs its size.
 */
function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length} element${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

function fail(where: string, field: string, expected: string, value: unknown): never {
  throw new InvalidPayload(`${where}"${field}" must be ${expected}, got ${show(value)}`);
}

/** The longest reason kept: it goes to the log, once per message. */
const MAX_REASON_LENGTH = 300;

/**
 * Parses and validates one MQTT payload; `receivedAt` is the default `created` and the reference
 * of `window`. Never throws: whatever goes wrong with one message makes that message invalid.
 */
export function parsePayload(payload: Uint8Array, receivedAt: number, window: CreatedWindow = DEFAULT_CREATED_WINDOW): ParsedMessage {
  try {
    return parseChecked(payload, receivedAt, window);
  } catch (error) {
    // Not a refusal of ours (those are InvalidPayload): a bug or a limit of the runtime that this
    // message reached. The message is dropped like an invalid one, not its whole batch.
    const reason = error instanceof InvalidPayload ? error.message : `payload could not be validated: ${String(error)}`;
    return { valid: false, reason: reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}...` : reason };
  }
}

function parseChecked(payload: Uint8Array, receivedAt: number, window: CreatedWindow): ParsedMessage {
  // A Buffer from the broker, or a plain Uint8Array after crossing to a worker thread.
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  // toString() would replace bytes that are not UTF-8 with U+FFFD and store what was never sent.
  if (!isUtf8(bytes)) throw new InvalidPayload('payload is not UTF-8');
  const problem = structureProblem(bytes);
  if (problem) throw new InvalidPayload(problem);
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InvalidPayload(`payload is not JSON: ${(error as Error).message}`);
  }
  const events: EventValues[] = [];
  const reports: GatewayReport[] = [];
  const latest = receivedAt + window.aheadMs;
  if (Array.isArray(body)) {
    if (body.length > MAX_EVENTS_PER_MESSAGE) throw new InvalidPayload(tooManyEvents(body.length));
    for (let i = 0; i < body.length; i++) parseObject(body[i], `element ${i}: `, receivedAt, window.earliest, latest, events, reports);
  } else {
    parseObject(body, '', receivedAt, window.earliest, latest, events, reports);
  }
  // JSON text without a backslash has no escape sequence, so none of its strings holds a quote, a
  // backslash or a control character (JSON.parse refuses them unescaped): every text the events
  // got from it is plain (events.ts, `plain_text`). One scan of the bytes instead of a test per text;
  // a backslash anywhere only sends the message's events down the escaping path.
  if (!bytes.includes(BACKSLASH)) for (const values of events) values[COLUMN.plain_text] = 1;
  return { valid: true, events, reports };
}

function parseObject(
  value: unknown,
  where: string,
  receivedAt: number,
  earliest: number,
  latest: number,
  events: EventValues[],
  reports: GatewayReport[],
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidPayload(`${where}expected an event object, got ${show(value)}`);
  }
  const object = value as Record<string, unknown>;
  if (object.class === 'gateway') reports.push(parseReport(object, where));
  else events.push(parseEvent(object, where, receivedAt, earliest, latest));
}

// null counts as absent: devices often serialise missing optional fields that way.
function parseEvent(object: Record<string, unknown>, where: string, receivedAt: number, earliest: number, latest: number): EventValues {
  const values: EventValues = new Array(STORED_EVENT_COLUMNS.length).fill(null);
  const { id, class: eventClass, type, created } = object;
  if (id == null) values[COLUMN.id] = randomUUID();
  else if (typeof id === 'string' && UUID.test(id)) values[COLUMN.id] = id;
  else fail(where, 'id', 'a UUID', id);
  if (eventClass == null) values[COLUMN.class] = 'event';
  else if (typeof eventClass === 'string' && EVENT_CLASSES.has(eventClass)) values[COLUMN.class] = eventClass;
  else fail(where, 'class', 'one of event, device, gateway, job_config, device_config', eventClass);
  if (typeof type === 'string' && EVENT_TYPES.has(type)) values[COLUMN.type] = type;
  else fail(where, 'type', 'scan or telemetry', type);
  if (created == null) {
    values[COLUMN.created] = receivedAt;
    values[COLUMN.created_stamped] = 1;
  } else if (typeof created === 'number' && Number.isSafeInteger(created) && created >= earliest && created <= latest) values[COLUMN.created] = created;
  else fail(where, 'created', `milliseconds since the epoch from ${isoTime(earliest)} to ${isoTime(latest)}`, created);
  for (const [name, slot, longest] of STRING_SLOTS) {
    const field = object[name];
    if (typeof field === 'string') {
      if (field.length > longest) throw new InvalidPayload(`${where}"${name}" must be at most ${longest} characters, got ${field.length}`);
      values[slot] = wellFormed(field);
    } else if (field != null) fail(where, name, 'a string', field);
  }
  for (const [name, slot] of NUMBER_SLOTS) {
    const field = object[name];
    if (typeof field === 'number' && Number.isFinite(field)) values[slot] = field;
    else if (field != null) fail(where, name, 'a number', field);
  }
  return values;
}

/** A time for a reason, in ISO 8601 (the window's bounds are always valid dates). */
const isoTime = (millis: number) => new Date(millis).toISOString();

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
