import { useId, useState } from 'preact/hooks';
import type { JobAnalysis, JobConfig } from '../../../src/client/jobs';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { api, customerPath } from '../../lib/api';
import { AnalysisSummary } from './analysis-summary';
import { DurationChart } from './duration-chart';
import { fromLocalInput, toLocalInput } from './local-time';

const DAY = 24 * 60 * 60 * 1000;

/** A labelled `datetime-local` input: the analysis' range, in the reader's time zone. */
function TimeField({ label, value, onValue }: { label: string; value: string; onValue: (value: string) => void }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="datetime-local" required value={value} onInput={(event) => onValue(event.currentTarget.value)} />
    </div>
  );
}

interface Props {
  configs: readonly JobConfig[];
  nameOf: (id: string) => string;
}

/**
 * `POST /{customer_id}/job-analysis` over a range (the last 24 hours at first, as the CLI): the
 * jobs of a configuration per gateway, drawn and summed up.
 */
export function AnalysisPanel({ configs, nameOf }: Props) {
  const configField = useId();
  const [configId, setConfigId] = useState('');
  const [from, setFrom] = useState(() => toLocalInput(Date.now() - DAY));
  const [to, setTo] = useState(() => toLocalInput(Date.now() + 60_000));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [analysis, setAnalysis] = useState<JobAnalysis>();
  const chosen = configs.find((c) => c.job_config_id === configId) ?? configs[0];
  const analyze = async (event: Event) => {
    event.preventDefault();
    const [start, end] = [fromLocalInput(from), fromLocalInput(to)];
    if (!chosen || start === undefined || end === undefined) return;
    setError(undefined);
    setAnalysis(undefined);
    // The API would refuse it too, but would quote the times in milliseconds.
    if (end < start) return setError(new Error('The range ends before it starts: choose a "To" after "From".'));
    setBusy(true);
    try {
      setAnalysis(await api.post<JobAnalysis>(customerPath('/job-analysis'), { job_config_id: chosen.job_config_id, start_time: start, end_time: end }));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const jobs = analysis?.results.reduce((sum, r) => sum + r.jobs.length, 0) ?? 0;
  return (
    <section class="analysis" aria-labelledby={`${configField}-heading`}>
      <h2 id={`${configField}-heading`}>Analysis</h2>
      {configs.length === 0 ? (
        <p class="muted">Create a job configuration to analyse its jobs.</p>
      ) : (
        <form class="analysis-form" onSubmit={analyze}>
          <div class="field">
            <label for={configField}>Configuration</label>
            <select id={configField} value={chosen?.job_config_id} onChange={(event) => setConfigId(event.currentTarget.value)}>
              {configs.map((c) => (
                <option key={c.job_config_id} value={c.job_config_id}>
                  {c.job_name}
                </option>
              ))}
            </select>
          </div>
          <TimeField label="From" value={from} onValue={setFrom} />
          <TimeField label="To" value={to} onValue={setTo} />
          <Button type="submit" kind="primary" busy={busy}>
            Analyze
          </Button>
        </form>
      )}
      <ErrorMessage error={error} />
      {analysis &&
        (jobs === 0 ? (
          <p class="notice" role="status">
            No jobs of {chosen?.job_name} in this range.
          </p>
        ) : (
          <>
            <DurationChart analysis={analysis} nameOf={nameOf} />
            <AnalysisSummary analysis={analysis} nameOf={nameOf} />
          </>
        ))}
    </section>
  );
}
