import { parentPort, workerData } from 'node:worker_threads';
import type { CellMode } from '../domain/csv.js';
import { openStore } from '../store/open.js';
import type { StoreLocator } from '../store/ports/index.js';
import { lowerThreadPriority } from '../threads/priority.js';
import { writeEventsCsv } from './csv-writer.js';
import { exportWriteFailure } from './write-failure.js';

/** What the exporter hands a worker. */
export interface ExportJob {
  /** The store the worker opens as a reader. */
  locator: StoreLocator;
  customerId: string;
  start: number;
  end: number;
  /** The temporary file to write; the exporter joins the parts and renames the result. */
  file: string;
  /** Whether this part starts the file, with the header row. */
  header: boolean;
  /** How text cells are written (the task's `cells`). */
  cells: CellMode;
}

/** What a worker reports: its store is open (it may be terminated from now on), the file is complete, or why it is not. */
export type ExportMessage = { type: 'opened' } | { type: 'done'; rows: number } | { type: 'failed'; reason: string };

// One part of an export per worker thread, on its own read-only connection (SQLite: WAL lets it
// read while the server's connection keeps writing, and its page cache stays SQLite's default
// 2 MB: the export reads each page once), and the server's event loop never waits for the export.
const job = workerData as ExportJob;
lowerThreadPriority();
try {
  const store = await openStore(job.locator, 'reader');
  parentPort!.postMessage({ type: 'opened' } satisfies ExportMessage);
  try {
    const rows = await writeEventsCsv(store.events, job.customerId, job, job.file, job.header, job.cells);
    parentPort!.postMessage({ type: 'done', rows } satisfies ExportMessage);
  } finally {
    await store.close();
  }
} catch (error) {
  // Said here, with the cause: an error thrown out of a worker reaches the exporter without its
  // message when it is not a plain Error (better-sqlite3's SqliteError).
  parentPort!.postMessage({ type: 'failed', reason: exportWriteFailure(error, job.file) } satisfies ExportMessage);
  process.exitCode = 1;
}
