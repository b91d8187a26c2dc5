import { rename, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { exportEvents, getExportTask, startExportTask, type ExportLink, type ExportTask } from '../../client/exports.js';
import type { EventRange } from '../../client/events.js';
import { addRangeOptions, rangeQuery, type RangeOptions } from '../flags.js';
import { CliError, Exit, STDOUT, progressLine, success, writeOutput, type ProgressLine } from '../io.js';
import { connect, type Session } from '../session.js';
import { examples } from '../help.js';

interface ExportOptions extends RangeOptions {
  output?: string;
  async?: boolean;
  force?: boolean;
  rawCells?: boolean;
}

/** Polls no faster than this at first, backing off to the maximum. */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 5000;

function stamp(millis: number): string {
  return new Date(millis).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) (value /= 1024), unit++;
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Waits for the task, polling with backoff; the link of the finished export. */
async function waitForTask(session: Session, task: string, progress: ProgressLine): Promise<ExportTask> {
  const started = Date.now();
  let delay = POLL_FIRST_MS;
  for (;;) {
    const state = await getExportTask(session, task);
    if (state.completed) return state;
    progress.show(`Exporting (task ${task}, ${Math.round((Date.now() - started) / 1000)} s)…`);
    await new Promise((done) => setTimeout(done, delay));
    delay = Math.min(POLL_MAX_MS, delay * 2);
  }
}

/** `scanhub events export`: a CSV of a range of events, written to a file. */
export function registerExportCommand(events: Command): void {
  addRangeOptions(events.command('export').description('export events as CSV (oldest first) and download the file (default: the last 24 hours)'))
    .option('-o, --output <file>', 'where to write the CSV, - for stdout (default: events-<from>-<to>.csv here)')
    .option('--async', 'run as an export task and poll it (for large ranges: no long-held request)')
    .option('--force', 'overwrite the output file if it exists')
    .option('--raw-cells', "write cells as stored: no leading ' before text that begins with =, +, -, @, tab or CR (for programs, not spreadsheets)")
    .addHelpText('after', examples(['scanhub events export --since 7d -o last-week.csv', 'scanhub events export --since 2026-11-01 --until 2026-12-01 --async -o - | gzip > november.csv.gz']))
    .action(async (options: ExportOptions, command: Command) => {
      const session = await connect(command);
      const { io } = session;
      const range = rangeQuery(options, Date.now(), true);
      const output = options.output ?? `events-${stamp(range.start_time_millis!)}-${stamp(range.end_time_millis!)}.csv`;
      await writeOutput(output === STDOUT ? output : resolve(output), Boolean(options.force), async (file, name) => {
        const response = await exportTo(session, range, options, file);
        const { size } = await stat(file);
        // With -o - the CSV is stdout: the JSON answer would be mixed into it.
        if (io.json && name !== 'stdout') io.out(JSON.stringify(response, null, 2));
        const [from, to] = [range.start_time_millis!, range.end_time_millis!].map((millis) => new Date(millis).toISOString());
        success(io, `Wrote the events of ${from} to ${to} to ${name} (${formatBytes(size)}).`);
      });
    });
}

/** Runs the export (synchronously, or as a task with --async) and downloads its file to `file`. */
async function exportTo(session: Session, range: EventRange, options: ExportOptions, file: string): Promise<ExportTask | ExportLink> {
  const progress = progressLine();
  const cells = options.rawCells ? 'raw' : 'safe';
  let response: ExportTask | ExportLink;
  if (options.async) {
    const { task } = await startExportTask(session, range, cells);
    const state = await waitForTask(session, task, progress);
    progress.clear();
    if (state.status === 'FAILED') throw new CliError(`export task ${task} failed; the server log says why`, Exit.ERROR);
    if (!state.download_link) throw new CliError(`export task ${task} finished but its file is no longer kept`, Exit.ERROR);
    response = state;
  } else {
    progress.show('Exporting…');
    response = await exportEvents(session, range, cells);
  }
  // Downloaded under a temporary name: an interrupted download never looks like a complete export.
  const partial = `${file}.partial`;
  try {
    await session.client.download(response.download_link!, partial, (received, total) =>
      progress.show(`Downloading ${formatBytes(received)}${total ? ` of ${formatBytes(total)} (${Math.floor((received / total) * 100)}%)` : ''}`),
    );
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    progress.clear();
  }
  return response;
}
