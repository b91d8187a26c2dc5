import type { JobAnalysis } from '../../../src/client/jobs';
import { formatDuration, summarizeDurations, type DurationSummary } from '../../../src/domain/job-stats';
import { Table, type Column } from '../../components/table';

interface SummaryRow {
  key: string;
  name: string;
  summary: DurationSummary | undefined;
}

const figure = (pick: (s: DurationSummary) => number) => (row: SummaryRow) => (row.summary ? formatDuration(pick(row.summary)) : '–');

/** The summary of an analysis, as `scanhub jobs analyze` computes it: all gateways, then each in the configuration's order. */
export function AnalysisSummary({ analysis, nameOf }: { analysis: JobAnalysis; nameOf: (id: string) => string }) {
  const durations = (jobs: JobAnalysis['results'][number]['jobs']) => jobs.map((j) => j.end_time - j.start_time);
  const rows: SummaryRow[] = [
    { key: '', name: 'All gateways', summary: summarizeDurations(analysis.results.flatMap((r) => durations(r.jobs))) },
    ...analysis.results.map((r) => ({ key: r.gateway_id, name: nameOf(r.gateway_id), summary: summarizeDurations(durations(r.jobs)) })),
  ];
  const columns: Column<SummaryRow>[] = [
    { header: 'Gateway', cell: (r) => r.name, rowHeader: true, class: 'name' },
    { header: 'Jobs', cell: (r) => String(r.summary?.count ?? 0), class: 'number' },
    { header: 'Median', cell: figure((s) => s.median), class: 'number' },
    { header: 'p90', cell: figure((s) => s.p90), class: 'number' },
    { header: 'Longest', cell: figure((s) => s.longest), class: 'number' },
  ];
  return <Table caption="Job summary" columns={columns} rows={rows} rowKey={(r) => r.key} empty="" />;
}
