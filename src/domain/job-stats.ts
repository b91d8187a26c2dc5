/** Figures over job durations (milliseconds) for `scanhub jobs analyze` and the console's Jobs page. */
export interface DurationSummary {
  count: number;
  median: number;
  p90: number;
  longest: number;
}

/** Count, median (mean of the two middle values for an even count), p90 (nearest rank) and longest; undefined for none. */
export function summarizeDurations(durations: readonly number[]): DurationSummary | undefined {
  if (durations.length === 0) return undefined;
  const sorted = [...durations].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  const p90 = sorted[Math.max(0, Math.ceil(0.9 * n) - 1)]!;
  return { count: n, median, p90, longest: sorted[n - 1]! };
}

export interface HistogramBin {
  /** Included lower bound, ms. */
  from: number;
  /** Excluded upper bound, ms (included for the last bin). */
  to: number;
  count: number;
}

/** Equal-width bins from the shortest to the longest duration; one bin when all are equal. */
export function durationHistogram(durations: readonly number[], bins = 8): HistogramBin[] {
  if (durations.length === 0) return [];
  // A loop, not Math.min(...durations): a spread of many thousands of jobs could exhaust the stack.
  let min = durations[0]!;
  let max = min;
  for (const duration of durations) {
    if (duration < min) min = duration;
    if (duration > max) max = duration;
  }
  if (min === max) return [{ from: min, to: max, count: durations.length }];
  const width = Math.ceil((max - min) / bins);
  const histogram = Array.from({ length: bins }, (_, i) => ({ from: min + i * width, to: min + (i + 1) * width, count: 0 }));
  for (const duration of durations) histogram[Math.min(bins - 1, Math.floor((duration - min) / width))]!.count++;
  return histogram;
}

/** `850ms`, `12.3s`, `4m 05s`, `1h 02m 03s`, `2d 03h 04m`. */
export function formatDuration(ms: number): string {
  const rounded = Math.round(ms);
  if (rounded < 1_000) return `${rounded}ms`;
  if (rounded < 60_000) return `${(rounded / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(rounded / 1_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const [d, h, m, s] = [Math.floor(seconds / 86_400), Math.floor(seconds / 3_600) % 24, Math.floor(seconds / 60) % 60, seconds % 60];
  if (d > 0) return `${d}d ${pad(h)}h ${pad(m)}m`;
  if (h > 0) return `${h}h ${pad(m)}m ${pad(s)}s`;
  return `${m}m ${pad(s)}s`;
}
