import { describe, expect, it } from 'vitest';
import { parsePayload } from '../src/mqtt/payload.js';
import { EVENT_COLUMNS, type EventColumn } from '../src/store/event-rows.js';

/** Where a column's value sits in a parsed event (after the customer slot). */
const slot = (name: EventColumn) => 1 + EVENT_COLUMNS.indexOf(name);

describe('parsePayload', () => {
  it('replaces lone surrogates in strings with U+FFFD, so that what is stored is UTF-8', () => {
    // Valid UTF-8 bytes whose JSON escapes name half a surrogate pair; a whole pair stays.
    const payload = Buffer.from('{"type":"scan","created":5,"scan_code":"a\\ud800b","device_id":"\\udfff","device_firmware":"\\ud83d\\ude00"}');
    const parsed = parsePayload(payload, 1);
    expect(parsed.valid).toBe(true);
    if (!parsed.valid) return;
    const [event] = parsed.events;
    expect(event![slot('scan_code')]).toBe('a\ufffdb');
    expect(event![slot('device_id')]).toBe('\ufffd');
    expect(event![slot('device_firmware')]).toBe('😀');
  });
});
