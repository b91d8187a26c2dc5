/** The stored columns of an event, in the order of the CSV export (docs/events.md "Exports"). */
export const EVENT_COLUMNS = [
  'id',
  'class',
  'type',
  'created',
  'scan_code',
  'scan_duration',
  'scan_decode_symbology',
  'device_id',
  'device_battery',
  'device_firmware',
  'device_temperature',
  'gateway_id',
  'gateway_usecase',
  'gateway_station',
  'metrics_worker_steps',
] as const;

export type EventColumn = (typeof EVENT_COLUMNS)[number];

/** The columns that hold any number (REAL); `created` is an integer, the others are text. */
export const REAL_COLUMNS: ReadonlySet<string> = new Set<EventColumn>(['scan_duration', 'device_battery', 'device_temperature', 'metrics_worker_steps']);

/** One event as stored and as the API shows it; absent optional fields are null in the row. */
export interface EventRow {
  id: string;
  class: string;
  type: string;
  created: number;
  scan_code: string | null;
  scan_duration: number | null;
  scan_decode_symbology: string | null;
  device_id: string | null;
  device_battery: number | null;
  device_firmware: string | null;
  device_temperature: number | null;
  gateway_id: string | null;
  gateway_usecase: string | null;
  gateway_station: string | null;
  metrics_worker_steps: number | null;
}

/** The text columns of EVENT_COLUMNS: neither a number nor `created`. */
export const TEXT_COLUMNS: readonly EventColumn[] = EVENT_COLUMNS.filter((column) => column !== 'created' && !REAL_COLUMNS.has(column));

/**
 * The columns an event is stored with, in INSERT order: its customer, EVENT_COLUMNS, then
 * `created_stamped` (1 when the service stamped `created`: such events are unique by id alone,
 * docs/gateways-mqtt.md "Payloads") and `plain_text` (1 when no text holds a character JSON
 * escapes, so the list writes them unescaped: store/sqlite/event-json.ts); else NULL.
 */
export const STORED_EVENT_COLUMNS = ['customer_id', ...EVENT_COLUMNS, 'created_stamped', 'plain_text'] as const;

/** A character JSON writes escaped: a quote, a backslash or a control character (U+0000 to U+001F). */
const JSON_ESCAPED = /["\\\u0000-\u001f]/;

/** Whether JSON writes each text as it is, between quotes (null and undefined count as plain: absent). */
export function plainTexts(texts: readonly unknown[]): boolean {
  for (const text of texts) if (typeof text === 'string' && JSON_ESCAPED.test(text)) return false;
  return true;
}

/** A row's values in STORED_EVENT_COLUMNS order, as given (its `created` not stamped). */
export function storedValues(customerId: string, row: EventRow): (string | number | null)[] {
  const plain = plainTexts(TEXT_COLUMNS.map((column) => row[column]));
  return [customerId, ...EVENT_COLUMNS.map((column) => row[column] ?? null), null, plain ? 1 : null];
}

/** The API form of a row: null fields left out. */
export function toApiEvent(row: EventRow): Record<string, string | number> {
  const event: Record<string, string | number> = {};
  for (const column of EVENT_COLUMNS) {
    const value = row[column];
    if (value !== null && value !== undefined) event[column] = value;
  }
  return event;
}
