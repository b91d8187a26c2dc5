import type { JobAnalysis } from '../../../src/client/jobs';

/** Gateways drawn at most: as many as the palette has colours that stay apart (styles/main.css `--chart-N`). */
export const MAX_CHARTED = 8;

/** What the chart draws: uPlot's aligned data (start times in seconds, then each gateway's durations in ms or null). */
export interface ChartSeries {
  gatewayIds: string[];
  /** Gateways with jobs that the chart leaves out (beyond MAX_CHARTED). */
  left: number;
  data: [number[], ...(number | null)[][]];
}

/**
 * A point per job at its start, its height the duration, one series per gateway with jobs (the
 * first MAX_CHARTED in the configuration's order). uPlot wants one x array shared by every
 * series: each job gets its own x entry, and the other gateways have a gap there.
 */
export function chartSeries(analysis: JobAnalysis): ChartSeries {
  const withJobs = analysis.results.filter((r) => r.jobs.length > 0);
  const charted = withJobs.slice(0, MAX_CHARTED);
  const points = charted
    .flatMap((r, series) => r.jobs.map((j) => ({ series, x: j.start_time / 1000, y: j.end_time - j.start_time })))
    .sort((a, b) => a.x - b.x);
  const ys = charted.map(() => new Array<number | null>(points.length).fill(null));
  points.forEach((p, i) => (ys[p.series]![i] = p.y));
  return { gatewayIds: charted.map((r) => r.gateway_id), left: withJobs.length - charted.length, data: [points.map((p) => p.x), ...ys] };
}
