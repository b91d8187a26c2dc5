import { describe, expect, it } from 'vitest';
import { MAX_EVENTS_PER_MESSAGE, MAX_NESTING, structureProblem } from '../../src/domain/payload-limits.js';
import { parsePayload } from '../../src/domain/payload.js';
import { EVENT_COLUMNS, type EventColumn } from '../../src/store/sqlite/event-rows.js';

/** Where a column's value sits in a parsed event (after the customer slot). */
const slot = (name: EventColumn) => 1 + EVENT_COLUMNS.indexOf(name);
const T0 = 1_800_000_000_000;
const DAY = 86_400_000;
const parse = (payload: string | Buffer, receivedAt = T0) => parsePayload(Buffer.from(payload), receivedAt);

describe('parsePayload', () => {
  it('replaces lone surrogates in strings with U+FFFD, so that what is stored is UTF-8', () => {
    // Valid UTF-8 bytes whose JSON escapes name half a surrogate pair; a whole pair stays.
    const payload = '{"type":"scan","created":1700000000000,"scan_code":"a\\ud800b","device_id":"\\udfff","device_firmware":"\\ud83d\\ude00"}';
    const parsed = parse(payload);
    expect(parsed.valid).toBe(true);
    if (!parsed.valid) return;
    const [event] = parsed.events;
    expect(event![slot('scan_code')]).toBe('a\ufffdb');
    expect(event![slot('device_id')]).toBe('\ufffd');
    expect(event![slot('device_firmware')]).toBe('😀');
  });

  // Each refused with the reason the log shows; none throws (the writer's batch never sees an exception).
  const refused: [string, string | Buffer, string][] = [
    ['a nesting bomb as the message', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'payload nests arrays or objects deeper than 64 levels'],
    ['a nesting bomb as the value of type', `{"type":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'payload nests arrays or objects deeper than 64 levels'],
    ['objects nested 65 deep', `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`, 'payload nests arrays or objects deeper than 64 levels'],
    ['bytes that are not UTF-8 inside a string', Buffer.concat([Buffer.from('{"type":"scan","scan_code":"'), Buffer.from([0xff]), Buffer.from('"}')]), 'payload is not UTF-8'],
    ['an overlong UTF-8 encoding', Buffer.concat([Buffer.from('{"type":"scan","scan_code":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]), 'payload is not UTF-8'],
    ['too many events', JSON.stringify(Array.from({ length: 10_000 }, () => ({ type: 'scan' }))), 'a message holds at most 1000 events, got an array of 10000'],
    ['a scan code of 200,000 characters', JSON.stringify({ type: 'scan', scan_code: 'x'.repeat(200_000) }), '"scan_code" must be at most 8192 characters, got 200000'],
    ['a device id of 257 characters', JSON.stringify({ type: 'scan', device_id: 'd'.repeat(257) }), '"device_id" must be at most 256 characters, got 257'],
    ['created 2^53-1', JSON.stringify({ type: 'scan', created: 2 ** 53 - 1 }), `"created" must be milliseconds since the epoch from 2000-01-01T00:00:00.000Z to ${new Date(T0 + DAY).toISOString()}, got 9007199254740991`],
    ['created before 2000', JSON.stringify({ type: 'scan', created: Date.UTC(2000, 0, 1) - 1 }), `"created" must be milliseconds since the epoch from 2000-01-01T00:00:00.000Z to ${new Date(T0 + DAY).toISOString()}, got 946684799999`],
    ['created a day and a millisecond after receipt', JSON.stringify({ type: 'scan', created: T0 + DAY + 1 }), `"created" must be milliseconds since the epoch from 2000-01-01T00:00:00.000Z to ${new Date(T0 + DAY).toISOString()}, got ${T0 + DAY + 1}`],
    ['a deep value named, not serialised', `{"type":${'['.repeat(MAX_NESTING - 1)}${']'.repeat(MAX_NESTING - 1)}}`, '"type" must be scan or telemetry, got an array of 1 element'],
    ['an object for a string', '{"type":"scan","device_id":{"a":1}}', '"device_id" must be a string, got an object'],
    ['a long string value cut in the reason', JSON.stringify({ type: 'x'.repeat(100) }), `"type" must be scan or telemetry, got "${'x'.repeat(60)}..."`],
  ];

  it.each(refused)('refuses %s, naming why', (_name, payload, reason) => {
    expect(parse(payload)).toEqual({ valid: false, reason });
  });

  it('takes the edges of the limits', () => {
    const events = Array.from({ length: MAX_EVENTS_PER_MESSAGE }, (_, i) => ({
      type: 'scan',
      created: i % 2 ? Date.UTC(2000, 0, 1) : T0 + DAY,
      scan_code: 'c'.repeat(8192),
      device_id: 'd'.repeat(256),
      extra: JSON.parse(`${'['.repeat(MAX_NESTING - 2)}${']'.repeat(MAX_NESTING - 2)}`),
    }));
    const parsed = parse(JSON.stringify(events));
    expect(parsed.valid && parsed.events.length).toBe(MAX_EVENTS_PER_MESSAGE);
    // Brackets inside strings are text, not nesting.
    expect(parse(JSON.stringify({ type: 'scan', scan_code: `${'['.repeat(5000)}\\"{{{` }))).toMatchObject({ valid: true });
  });

  it('takes a configured window of created', () => {
    const window = { earliest: Date.UTC(2024, 0, 1), aheadMs: 60_000 };
    const at = (created: number) => parsePayload(Buffer.from(JSON.stringify({ type: 'scan', created })), T0, window).valid;
    expect([at(Date.UTC(2024, 0, 1) - 1), at(Date.UTC(2024, 0, 1)), at(T0 + 60_000), at(T0 + 60_001)]).toEqual([false, true, true, false]);
  });
});

describe('structureProblem', () => {
  const problem = (text: string) => structureProblem(Buffer.from(text), { depth: 3, elements: 4 });
  const TOO_DEEP = 'payload nests arrays or objects deeper than 3 levels';

  it('counts the nesting of arrays and objects outside strings, escapes included', () => {
    expect(problem('[[[]]]')).toBeUndefined();
    expect(problem('[[[[]]]]')).toBe(TOO_DEEP);
    expect(problem('[{"a":[{}]}]')).toBe(TOO_DEEP);
    // Many brackets side by side are not deep: only nesting counts.
    expect(problem(`{"a":[${'[],'.repeat(100)}[]]}`)).toBeUndefined();
    // Inside strings, escaped quotes included, brackets and commas count nothing.
    expect(problem(`{"a":["\\"[[[[,,,,", "\\\\", "{{{{"], "b":[[],[]]}`)).toBeUndefined();
    expect(problem(`["\\\\"${'['.repeat(4)}]`)).toBe(TOO_DEEP);
  });

  it('counts the elements of a top-level array only, before parsing', () => {
    expect(problem('[{},{},[],{}]')).toBeUndefined();
    expect(problem('[{},{},[],{},{}]')).toBe('a message holds at most 4 events, got an array of 5');
    // Commas of nested arrays and of a top-level object are no elements.
    expect(problem('[[1,2,3,4,5],{"a":1,"b":2,"c":3,"d":4,"e":5}]')).toBeUndefined();
    expect(problem('{"a":[],"b":[],"c":{},"d":{},"e":[]}')).toBeUndefined();
  });
});
