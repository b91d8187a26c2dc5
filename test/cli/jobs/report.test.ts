import { describe, expect, it } from 'vitest';
import { printAnalysis } from '../../../src/cli/jobs/report.js';
import type { Io } from '../../../src/cli/io.js';
import { durationHistogram, formatDuration, summarizeDurations } from '../../../src/domain/job-stats.js';
import { rangeQuery } from '../../../src/cli/flags.js';

const resolveTimeRange = (options: { since?: string; from?: string; to?: string }, now: number) => {
  const { start_time_millis, end_time_millis } = rangeQuery(options, now, true);
  return { start_time: start_time_millis, end_time: end_time_millis };
};

// The terminal report shows local times: pin the zone.
process.env.TZ = 'UTC';

describe('summarizeDurations', () => {
  it('gives count, median (mean of the middle two), p90 (nearest rank) and longest', () => {
    expect(summarizeDurations([40, 10, 30, 20])).toEqual({ count: 4, median: 25, p90: 40, longest: 40 });
    expect(summarizeDurations([5, 1, 3])).toEqual({ count: 3, median: 3, p90: 5, longest: 5 });
    const tenths = Array.from({ length: 20 }, (_, i) => (i + 1) * 10);
    expect(summarizeDurations(tenths)).toEqual({ count: 20, median: 105, p90: 180, longest: 200 });
    expect(summarizeDurations([])).toBeUndefined();
  });
});

describe('durationHistogram', () => {
  it('spreads durations over equal bins, the longest in the last', () => {
    expect(durationHistogram([0, 10, 70, 80], 4)).toEqual([
      { from: 0, to: 20, count: 2 },
      { from: 20, to: 40, count: 0 },
      { from: 40, to: 60, count: 0 },
      { from: 60, to: 80, count: 2 },
    ]);
    expect(durationHistogram([7, 7], 4)).toEqual([{ from: 7, to: 7, count: 2 }]);
  });
});

describe('time ranges', () => {
  const now = Date.UTC(2025, 5, 1, 12);
  it('resolves --since, --from/--to and the default of the last 24 hours', () => {
    expect(resolveTimeRange({ since: '2h' }, now)).toEqual({ start_time: now - 7_200_000, end_time: now });
    expect(resolveTimeRange({}, now)).toEqual({ start_time: now - 86_400_000, end_time: now });
    expect(resolveTimeRange({ from: '2025-06-01T08:00:00Z' }, now)).toEqual({ start_time: Date.UTC(2025, 5, 1, 8), end_time: now });
    expect(resolveTimeRange({ from: '2025-06-01', to: '1748779200000' }, now)).toEqual({ start_time: Date.UTC(2025, 5, 1), end_time: 1748779200000 });
    expect(resolveTimeRange({ to: '2h' }, now)).toEqual({ start_time: now - 7_200_000 - 86_400_000, end_time: now - 7_200_000 });
    expect(() => resolveTimeRange({ from: '1h', to: '2h' }, now)).toThrow('the range starts (2025-06-01T11:00:00.000Z) after it ends (2025-06-01T10:00:00.000Z)');
  });
});

describe('the terminal report', () => {
  it('prints jobs per gateway, a summary and a histogram of durations', () => {
    const out: string[] = [];
    const io: Io = { out: (t) => out.push(t), err: () => {}, tty: true, interactive: false, color: false, json: false, debug: false };
    const job = (start: number, end: number) => ({ start_time: start, end_time: end, start_event_id: 's', end_event_id: 'e' });
    printAnalysis(io, {
      results: [
        { gateway_id: 'gw-1', jobs: [job(0, 120_000), job(200_000, 440_000), job(500_000, 530_000)] },
        { gateway_id: 'gw-2', jobs: [] },
      ],
    });
    expect(out.join('\n')).toBe(
      [
        'Gateway gw-1: 3 jobs',
        '┌─────────────────────────┬─────────────────────────┬──────────┐',
        '│ START                   │ END                     │ DURATION │',
        '│ 1970-01-01 00:00:00.000 │ 1970-01-01 00:02:00.000 │   2m 00s │',
        '│ 1970-01-01 00:03:20.000 │ 1970-01-01 00:07:20.000 │   4m 00s │',
        '│ 1970-01-01 00:08:20.000 │ 1970-01-01 00:08:50.000 │    30.0s │',
        '└─────────────────────────┴─────────────────────────┴──────────┘',
        '',
        'Gateway gw-2: no jobs',
        '',
        'Summary',
        '┌─────────┬──────┬────────┬────────┬─────────┐',
        '│ GATEWAY │ JOBS │ MEDIAN │    P90 │ LONGEST │',
        '│ gw-1    │    3 │ 2m 00s │ 4m 00s │  4m 00s │',
        '│ gw-2    │    0 │      - │      - │       - │',
        '└─────────┴──────┴────────┴────────┴─────────┘',
        '',
        'Durations (all gateways)',
        `    30.0s–56.3s ${'█'.repeat(40)} 1`,
        '   56.3s–1m 22s 0',
        '  1m 22s–1m 48s 0',
        `  1m 48s–2m 15s ${'█'.repeat(40)} 1`,
        '  2m 15s–2m 41s 0',
        '  2m 41s–3m 07s 0',
        '  3m 07s–3m 33s 0',
        `  3m 33s–4m 00s ${'█'.repeat(40)} 1`,
      ].join('\n'),
    );
  });

  it('formats durations from milliseconds to days', () => {
    expect([850, 12_345, 245_000, 3_723_000, 183_840_000].map(formatDuration)).toEqual(['850ms', '12.3s', '4m 05s', '1h 02m 03s', '2d 03h 04m']);
  });
});
