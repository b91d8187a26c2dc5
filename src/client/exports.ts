import type { CellMode } from '../domain/csv.js';
import { seg, type CustomerApi } from './api.js';
import type { EventRange } from './events.js';

/** An export task as the API returns it (docs/events.md "Exports"). */
export interface ExportTask {
  task: string;
  completed: boolean;
  status: 'PENDING' | 'SUCCESSFUL' | 'FAILED';
  download_link?: string;
}

/** What starting an export task answers (202). */
export interface ExportTaskStarted {
  task: string;
  requested: string;
}

/** What a synchronous export answers: a signed link to the CSV. */
export interface ExportLink {
  download_link: string;
}

const exportPath = (api: CustomerApi) => `${api.base}/events/export`;

/**
 * How text cells are written: only `raw` is ever sent, since `safe` is the server's default and
 * a server that predates `cells` then still answers.
 */
function cellsOf(cells: CellMode): { cells: 'raw' } | undefined {
  return cells === 'raw' ? { cells: 'raw' } : undefined;
}

/** Exports the events of the range in one request (oldest first) and returns the link to the CSV. */
export function exportEvents(api: CustomerApi, range: EventRange, cells: CellMode): Promise<ExportLink> {
  return api.client.get<ExportLink>(exportPath(api), { ...range, ...cellsOf(cells) });
}

/** Starts an export task of the range (for large ranges: no long-held request). */
export function startExportTask(api: CustomerApi, range: EventRange, cells: CellMode): Promise<ExportTaskStarted> {
  return api.client.post<ExportTaskStarted>(`${exportPath(api)}/tasks`, cellsOf(cells), { ...range });
}

/** The state of an export task; its download link once it succeeded. */
export function getExportTask(api: CustomerApi, task: string): Promise<ExportTask> {
  return api.client.get<ExportTask>(`${exportPath(api)}/tasks/${seg(task)}`);
}
