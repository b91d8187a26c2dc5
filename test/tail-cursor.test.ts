import { describe, expect, it } from 'vitest';
import { TailCursor } from '../src/domain/tail-cursor.js';

const e = (id: string, created: number) => ({ id, created });

describe('TailCursor', () => {
  it('returns each event once, oldest first, while polls overlap', () => {
    const cursor = new TailCursor(1000, 100);
    expect(cursor.accept([e('b', 1005), e('a', 1005), e('old', 999)])).toEqual([e('a', 1005), e('b', 1005)]);
    expect(cursor.start).toBe(1000);
    expect(cursor.accept([e('c', 1200), e('b', 1005), e('a', 1005)])).toEqual([e('c', 1200)]);
    expect(cursor.start).toBe(1100);
    // A late event inside the overlap still shows; one behind it cannot (the poll no longer asks for it).
    expect(cursor.accept([e('late', 1150), e('c', 1200), e('too-late', 1099)])).toEqual([e('late', 1150)]);
    expect(cursor.accept([e('c', 1200), e('late', 1150)])).toEqual([]);
  });

  it('never moves its start backwards', () => {
    const cursor = new TailCursor(5000, 100);
    cursor.accept([e('x', 5001)]);
    expect(cursor.start).toBe(5000);
  });
});
