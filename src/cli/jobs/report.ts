import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import type { JobAnalysis } from '../../client/jobs.js';
import { durationHistogram, formatDuration, summarizeDurations, type DurationSummary } from '../../domain/job-stats.js';
import { gatewayLabel } from '../gateway-refs.js';
import { formatTime, type Io } from '../io.js';

/** `--csv`: one row per job, times and duration in milliseconds, RFC 4180. */
export function analysisCsv(analysis: JobAnalysis): string {
  const rows = analysis.results.flatMap((r) =>
    r.jobs.map((j) => [r.gateway_id, j.start_time, j.end_time, j.end_time - j.start_time, j.start_event_id, j.end_event_id]),
  );
  return stringify(rows, {
    header: true,
    columns: ['gateway_id', 'start_time', 'end_time', 'duration_ms', 'start_event_id', 'end_event_id'],
  });
}

const summaryCells = (gateway: string, summary: DurationSummary | undefined) =>
  summary
    ? [gateway, String(summary.count), formatDuration(summary.median), formatDuration(summary.p90), formatDuration(summary.longest)]
    : [gateway, '0', '-', '-', '-'];

/** A bar of `width` eighths of a cell in unicode blocks. */
function bar(eighths: number): string {
  const partial = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8]!;
  return '█'.repeat(Math.floor(eighths / 8)) + partial;
}

/** The histogram of all job durations, bars up to 40 cells wide. */
function histogramLines(durations: number[]): string[] {
  const bins = durationHistogram(durations);
  const most = Math.max(...bins.map((b) => b.count));
  const labels = bins.map((b) => `${formatDuration(b.from)}–${formatDuration(b.to)}`);
  const width = Math.max(...labels.map((l) => l.length));
  // A count above zero shows at least a sliver, zero shows nothing.
  const length = (count: number) => (count === 0 ? '' : bar(Math.max(1, Math.round((count / most) * 40 * 8))));
  return bins.map((b, i) => `  ${labels[i]!.padStart(width)} ${b.count === 0 ? '' : `${length(b.count)} `}${b.count}`);
}

/**
 * The human report: on a terminal a table of jobs per gateway, a summary per gateway and a
 * histogram of durations; piped, tab-separated job rows (gateway first, by name), a blank line, and
 * tab-separated summary rows.
 */
export function printAnalysis(io: Io, analysis: JobAnalysis, names: ReadonlyMap<string, string> = new Map()): void {
  const label = (gatewayId: string) => gatewayLabel(gatewayId, names);
  const summaries = analysis.results.map((r) => summarizeDurations(r.jobs.map((j) => j.end_time - j.start_time)));
  if (!io.tty) {
    const jobs = analysis.results.flatMap((r) =>
      r.jobs.map((j) => [label(r.gateway_id), formatTime(io, j.start_time), formatTime(io, j.end_time), formatDuration(j.end_time - j.start_time)].join('\t')),
    );
    const summary = analysis.results.map((r, i) => summaryCells(label(r.gateway_id), summaries[i]).join('\t'));
    io.out([...jobs, '', ...summary].join('\n'));
    return;
  }
  const heading = (text: string) => (io.color ? `\u001b[1m${text}\u001b[0m` : text);
  const style = { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [] };
  // No rule between rows: a day of jobs is hundreds of rows.
  const chars = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };
  const sections: string[] = [];
  for (const result of analysis.results) {
    if (result.jobs.length === 0) {
      sections.push(heading(`Gateway ${label(result.gateway_id)}: no jobs`));
      continue;
    }
    const table = new Table({ head: ['START', 'END', 'DURATION'], style, chars, colAligns: ['left', 'left', 'right'] });
    table.push(...result.jobs.map((j) => [formatTime(io, j.start_time), formatTime(io, j.end_time), formatDuration(j.end_time - j.start_time)]));
    sections.push(`${heading(`Gateway ${label(result.gateway_id)}: ${result.jobs.length} job${result.jobs.length === 1 ? '' : 's'}`)}\n${table.toString()}`);
  }
  const summary = new Table({ head: ['GATEWAY', 'JOBS', 'MEDIAN', 'P90', 'LONGEST'], style, chars, colAligns: ['left', 'right', 'right', 'right', 'right'] });
  summary.push(...analysis.results.map((r, i) => summaryCells(label(r.gateway_id), summaries[i])));
  sections.push(`${heading('Summary')}\n${summary.toString()}`);
  const durations = analysis.results.flatMap((r) => r.jobs.map((j) => j.end_time - j.start_time));
  if (durations.length > 1) sections.push(`${heading('Durations (all gateways)')}\n${histogramLines(durations).join('\n')}`);
  io.out(sections.join('\n\n'));
}
