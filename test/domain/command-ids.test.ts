// The ids of commands and of their audit entries (src/domain/command-ids.ts): UUIDs of version 7
// (RFC 9562 section 5.7), their first 48 bits the time given, so that ids made later sort later.
import { expect, it } from 'vitest';
import { timeOrderedUuid } from '../../src/domain/command-ids.js';
import { UUID_V7, uuidV7Time } from '../helpers/patterns.js';

it('is a version 7 UUID carrying the time in milliseconds, the rest random', () => {
  const now = 1_800_000_000_123;
  const ids = Array.from({ length: 100 }, () => timeOrderedUuid(now));
  for (const id of ids) {
    expect(id).toMatch(UUID_V7);
    expect(uuidV7Time(id)).toBe(now);
  }
  expect(new Set(ids).size).toBe(100);
});

it('sorts by time as text: a later millisecond gives a greater id, as an index keeps them', () => {
  const times = [0, 1, 255, 256, 1_800_000_000_000, 1_800_000_000_001, 2 ** 48 - 1];
  const ids = times.map((time) => timeOrderedUuid(time));
  expect([...ids].sort()).toEqual(ids);
  expect(ids.map(uuidV7Time)).toEqual(times);
});
