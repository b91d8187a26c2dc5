/**
 * Counts per second over the last `seconds`, in a fixed ring: memory stays the same however long
 * the page is open and however fast events come.
 */
export class RateHistory {
  private readonly counts: Int32Array;
  /** The second each slot of the ring counts (epoch seconds); a slot of an older second counts nothing. */
  private readonly seconds: Float64Array;

  constructor(readonly length: number) {
    this.counts = new Int32Array(length);
    this.seconds = new Float64Array(length).fill(-1);
  }

  /** One more at `at` (epoch milliseconds). */
  count(at: number, n = 1): void {
    const second = Math.floor(at / 1000);
    const slot = second % this.length;
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second;
      this.counts[slot] = 0;
    }
    this.counts[slot] += n;
  }

  /** The counts of the `length` whole seconds before the one of `now`, oldest first. */
  series(now: number): number[] {
    const current = Math.floor(now / 1000);
    const values: number[] = [];
    for (let second = current - this.length; second < current; second++) {
      const slot = second % this.length;
      values.push(this.seconds[slot] === second ? this.counts[slot]! : 0);
    }
    return values;
  }

  clear(): void {
    this.seconds.fill(-1);
  }
}
