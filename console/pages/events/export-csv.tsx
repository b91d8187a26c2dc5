import { useEffect, useRef, useState } from 'preact/hooks';
import type { ExportTask, ExportTaskStarted } from '../../../src/client/exports';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { api, customerPath } from '../../lib/api';
import { dateTime } from '../../lib/time';
import type { EventsQuery } from './event-pages';

/** How often the task is looked at while it runs. */
const POLL_MS = 1000;

type ExportState = { kind: 'idle' } | { kind: 'running'; seconds: number } | { kind: 'done'; task: string } | { kind: 'failed'; error: unknown };

const taskPath = (task: string) => customerPath(`/events/export/tasks/${encodeURIComponent(task)}`);

/** Hands the browser the signed link to save (its answer is `Content-Disposition: attachment`). */
function download(link: string): void {
  const anchor = document.createElement('a');
  anchor.href = link;
  anchor.download = '';
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

/**
 * `Export CSV`: runs an export task of the range shown (docs/events.md "Exports"), shows that it
 * runs, and downloads the file when it is done. The link lives 5 minutes; `Download again` asks
 * the task for a fresh one.
 */
export function ExportCsv({ query }: { query: EventsQuery }) {
  const [state, setState] = useState<ExportState>({ kind: 'idle' });
  const running = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => running.current?.abort(), []);

  const run = async () => {
    const stop = new AbortController();
    running.current = stop;
    setState({ kind: 'running', seconds: 0 });
    const started = Date.now();
    try {
      const range = `start_time_millis=${query.start}&end_time_millis=${query.end}`;
      const { task } = await api.post<ExportTaskStarted>(`${customerPath('/events/export/tasks')}?${range}`);
      for (;;) {
        const state = await api.get<ExportTask>(taskPath(task), { signal: stop.signal });
        if (state.status === 'FAILED') throw new Error('The export failed on the server (its log says why): try again, or ask the operator.');
        if (state.status === 'SUCCESSFUL' && state.download_link) {
          download(state.download_link);
          return setState({ kind: 'done', task });
        }
        if (state.completed) throw new Error('The export finished but its file is no longer kept: export again.');
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        if (stop.signal.aborted) return;
        setState({ kind: 'running', seconds: Math.round((Date.now() - started) / 1000) });
      }
    } catch (failure) {
      if (!stop.signal.aborted) setState({ kind: 'failed', error: failure });
    }
  };
  const again = async (task: string) => {
    try {
      const state = await api.get<ExportTask>(taskPath(task));
      if (!state.download_link) throw new Error('The file of this export is no longer kept: export again.');
      download(state.download_link);
    } catch (failure) {
      setState({ kind: 'failed', error: failure });
    }
  };

  const range = `${dateTime(query.start)} to ${dateTime(query.end)}`;
  return (
    <section class="export" aria-labelledby="export-heading">
      <h2 id="export-heading" class="visually-hidden">
        Export
      </h2>
      <div class="export-row">
        <Button kind="primary" busy={state.kind === 'running'} onClick={run}>
          Export CSV
        </Button>
        {state.kind === 'running' && <progress class="export-progress" aria-label="Export progress" />}
        <p class="export-state" role="status">
          {state.kind === 'running' && `Exporting the events from ${range}… ${state.seconds} s`}
          {state.kind === 'done' && `Exported the events from ${range}: the CSV file is downloading.`}
        </p>
        {state.kind === 'done' && <Button onClick={() => void again(state.task)}>Download again</Button>}
      </div>
      {query.gatewayId && <p class="hint">The export holds every gateway's events of the range, oldest first.</p>}
      <ErrorMessage error={state.kind === 'failed' ? state.error : undefined} />
    </section>
  );
}
