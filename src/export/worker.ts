import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../store/open.js';
import { writeEventsCsv } from './csv-writer.js';

/** What the exporter hands a worker. */
export interface ExportJob {
  databaseFile: string;
  customerId: string;
  start: number;
  end: number;
  /** The temporary file to write; the exporter renames it when the worker reports done. */
  file: string;
}

/** What a worker reports when the file is complete. */
export type ExportMessage = { type: 'done'; rows: number };

// One export per worker thread, on its own read-only connection: WAL lets it read while the
// server's connection keeps writing, and the server's event loop never waits for the export.
const job = workerData as ExportJob;
const db = openDatabase(job.databaseFile, { readonly: true });
// The export reads each page once, in order: a large page cache would only add to the server's RSS.
db.pragma('cache_size = -2000');
try {
  const rows = writeEventsCsv(db, job.customerId, job, job.file);
  parentPort!.postMessage({ type: 'done', rows } satisfies ExportMessage);
} finally {
  db.close();
}
