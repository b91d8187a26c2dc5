// The sizing and pacing of deletion batches (src/domain/retention.ts): exact values.
import { describe, expect, it } from 'vitest';
import { DAY_MS, MAX_BATCH, MAX_DELETED_PER_SECOND, MIN_BATCH, nextBatchSize, pauseAfter, retentionCutoff } from '../../src/domain/retention.js';

describe('retention batches', () => {
  it('cut off at now minus the period: events with created < cutoff go', () => {
    expect(retentionCutoff(100 * DAY_MS, 30)).toBe(70 * DAY_MS);
    expect(retentionCutoff(1_800_000_000_000, 1)).toBe(1_800_000_000_000 - 86_400_000);
  });

  it('size the next batch to the target hold at the last batch’s rate: at once down, at most twofold up', () => {
    // 100 rows in 10 ms: 50 rows fit in 5 ms.
    expect(nextBatchSize(100, 100, 10, 5)).toBe(50);
    // 100 rows in 1 ms: 500 would fit, but it may only double.
    expect(nextBatchSize(100, 100, 1, 5)).toBe(200);
    // Exactly on target: the same size.
    expect(nextBatchSize(100, 100, 5, 5)).toBe(100);
    // A batch that took 500 ms (a stalled thread): down to the floor, not to zero.
    expect(nextBatchSize(100, 100, 500, 5)).toBe(MIN_BATCH);
    // Never above the ceiling, and no division by a zero hold.
    expect(nextBatchSize(MAX_BATCH, MAX_BATCH, 0.001, 5)).toBe(MAX_BATCH);
    expect(nextBatchSize(100, 100, 0, 5)).toBe(200);
    expect(nextBatchSize(100, 0, 3, 5)).toBe(200);
  });

  it('pause at least as long as the batch held the writer, never less than the minimum, and long enough for the rate', () => {
    // 10 events at 5,000 a second take 2 ms: the other two terms decide.
    expect(pauseAfter(2.2, 10, 5)).toBe(5);
    expect(pauseAfter(7.1, 10, 5)).toBe(8);
    expect(pauseAfter(40, 10, 5)).toBe(40);
    // 100 events in 4 ms: 20 ms at 5,000 a second, so 16 ms more.
    expect(pauseAfter(4, 100, 5)).toBe(16);
    expect(MAX_DELETED_PER_SECOND).toBe(5000);
    expect(pauseAfter(4, 100, 5, 1000)).toBe(96);
    expect(pauseAfter(4, 100, 0, Infinity)).toBe(4);
    expect(pauseAfter(0, 0, 0)).toBe(0);
  });
});
