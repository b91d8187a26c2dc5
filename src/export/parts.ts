import { exportWriteFailure } from './write-failure.js';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import type { CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import type { StoreLocator } from '../store/ports/index.js';
import { workerScript } from '../threads/worker-script.js';
import type { ExportJob, ExportMessage } from './worker.js';

/**
 * Parts an export is split into by default, each written by its own worker thread (with its own
 * read connection). One: since SQLite writes the CSV (store/sqlite/event-csv.ts) a second part on
 * the second core gained little and took that core from ingest and requests (bench/README.md
 * "export").
 */
export const EXPORT_PARTS = 1;
/**
 * A worker's heap, kept small: an export holds one chunk at a time, and without a limit V8 lets
 * garbage grow to hundreds of MB before collecting, which counts against the server's RSS.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

/** What to write: the customer's events in the range, one part per file (the first with the header). */
export interface PartsJob {
  locator: StoreLocator;
  customerId: string;
  range: TimeRange;
  cells: CellMode;
  /** One temporary file per part, in order; the whole CSV ends up in the first. */
  files: string[];
}

/** An export being written in parts. */
export interface PartsWriting {
  /**
   * The rows written, once every part is written and the later parts are appended to the first
   * file (and deleted). Rejects with the first failure after every worker has stopped, so no part
   * file is written again after it: the caller deletes them.
   */
  written: Promise<number>;
  /** Stops the workers: `written` then rejects (unless it had resolved). */
  stop(): void;
}

/**
 * Writes the job's file: the range is cut into equal spans of time, one worker writes each into
 * its own file, and the later parts are appended to the first in order. Events are not spread
 * evenly in time, so parts may take unequal time; the file is the same either way.
 */
export function writeParts(job: PartsJob): PartsWriting {
  const ranges = splitRange(job.range, job.files.length);
  const workers: Worker[] = [];
  const opened = new Set<Worker>();
  const outcomes: Promise<number>[] = [];
  let stopped = false;
  for (const [part, range] of ranges.entries()) {
    try {
      const workerData: ExportJob = {
        locator: job.locator,
        customerId: job.customerId,
        ...range,
        file: job.files[part]!,
        header: part === 0,
        cells: job.cells,
      };
      const worker = new Worker(workerScript(import.meta.url, './worker.js'), { workerData, resourceLimits: WORKER_LIMITS });
      workers.push(worker);
      outcomes.push(outcomeOf(worker, () => stopped));
      // Terminated only once its store is open: terminating a thread while better-sqlite3 opens
      // (and fails to open) a database aborts the whole process (V8 "ToLocalChecked Empty
      // MaybeLocal"). Until then a stop waits for this message, or for the thread's own exit.
      worker.on('message', (message: ExportMessage) => {
        if (message.type !== 'opened') return;
        opened.add(worker);
        if (stopped) void worker.terminate();
      });
    } catch (error) {
      // No thread (out of threads or memory): the parts started are stopped below.
      outcomes.push(Promise.reject(new Error(`no export worker could be started: ${(error as Error).message}`)));
      break;
    }
  }
  const stop = () => {
    stopped = true;
    for (const worker of opened) void worker.terminate();
  };
  const written = Promise.all(outcomes).then(
    async (counts) => {
      try {
        await appendFiles(job.files[0]!, job.files.slice(1));
      } catch (error) {
        throw new Error(exportWriteFailure(error, job.files[0]!), { cause: error });
      }
      return counts.reduce((sum, count) => sum + count, 0);
    },
    async (error: Error) => {
      // One part failed: stop the others before the caller deletes their files.
      stop();
      await Promise.allSettled(outcomes);
      throw error;
    },
  );
  return { written, stop };
}

/** The rows a worker wrote, once it has exited; rejects with the reason if it did not finish. */
function outcomeOf(worker: Worker, stopped: () => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    let rows: number | undefined;
    let failure: string | undefined;
    worker.on('message', (message: ExportMessage) => {
      if (message.type === 'done') rows = message.rows;
      else if (message.type === 'failed') failure ??= message.reason;
    });
    // Errors cross threads as plain objects: a SqliteError arrives without its message.
    worker.on('error', (error) => (failure ??= error.message || `the export worker failed (${String((error as { code?: unknown }).code ?? error)})`));
    worker.on('exit', (code) => {
      if (rows !== undefined && failure === undefined && !stopped()) resolve(rows);
      else reject(new Error(failure ?? (stopped() ? 'the export was stopped before it finished' : `the export worker exited with code ${code}`)));
    });
  });
}

/** The range cut into `parts` consecutive half-open spans of (nearly) equal length that cover it exactly. */
export function splitRange(range: TimeRange, parts: number): TimeRange[] {
  const span = range.end - range.start;
  return Array.from({ length: parts }, (_, part) => ({
    start: range.start + Math.floor((span * part) / parts),
    end: part === parts - 1 ? range.end : range.start + Math.floor((span * (part + 1)) / parts),
  }));
}

/** Appends the files to `target` in order and deletes them. Streams: the event loop keeps serving meanwhile. */
async function appendFiles(target: string, files: string[]): Promise<void> {
  for (const file of files) {
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), createWriteStream(target, { flags: 'a' }));
    rmSync(file);
  }
}
