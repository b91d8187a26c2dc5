import { describe, expect, it } from 'vitest';
import { parseDuration, parseTimeInput } from '../../src/domain/time-input.js';

const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
    ['2w', 1_209_600_000],
    ['1h30m', 5_400_000],
    [' 2H ', 7_200_000],
    ['0s', 0],
  ])('%s is %d ms', (text, millis) => {
    expect(parseDuration(text)).toBe(millis);
  });

  it.each(['', '2', 'h', '2 h', '-2h', '1.5h', '2y', 'h2', '2hours'])('refuses "%s"', (text) => {
    expect(() => parseDuration(text)).toThrow(new RangeError(`"${text}" is not a duration: use a number and a unit, e.g. 30s, 30m, 2h, 7d or 2w`));
  });
});

describe('parseTimeInput', () => {
  it.each([
    ['now', NOW],
    ['2h', NOW - 7_200_000],
    ['7d', NOW - 7 * 86_400_000],
    ['30m', NOW - 1_800_000],
    ['2024-05-01T08:00:00Z', Date.UTC(2024, 4, 1, 8)],
    ['2024-05-01T08:00:00.250Z', Date.UTC(2024, 4, 1, 8, 0, 0, 250)],
    ['2024-05-01T10:00:00+02:00', Date.UTC(2024, 4, 1, 8)],
    ['2024-05-01T10:00+0200', Date.UTC(2024, 4, 1, 8)],
    ['2024-05-01 08:00Z', Date.UTC(2024, 4, 1, 8)],
    ['2024-05-01T08:00:00', new Date(2024, 4, 1, 8).getTime()],
    ['2024-05-01', new Date(2024, 4, 1).getTime()],
    ['1714550400000', 1714550400000],
  ])('%s', (text, millis) => {
    expect(parseTimeInput(text, NOW)).toBe(millis);
  });

  it.each(['yesterday', '2024-02-30', '2024-02-30T10:00Z', '2024-13-01', '2024-5-1', '12345', '2024-05-01T25:00Z', ''])('refuses "%s"', (text) => {
    expect(() => parseTimeInput(text, NOW)).toThrow(
      new RangeError(
        `"${text}" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d`,
      ),
    );
  });
});
