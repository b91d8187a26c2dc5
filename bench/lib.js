// Helpers shared by the benchmarks: JSON-line reporting and percentiles.

/** Prints one figure as a JSON line; `pass` is set when a target is given (`cmp` says which way). */
export function report(bench, metric, value, unit, target, cmp = '<=') {
  const line = { bench, metric, value: Math.round(value * 1000) / 1000, unit };
  if (target !== undefined) {
    line.target = `${cmp} ${target}`;
    line.pass = cmp === '<=' ? value <= target : value >= target;
  }
  console.log(JSON.stringify(line));
  return line;
}

/** The p-th percentile (0..100) of the numbers, nearest-rank. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
