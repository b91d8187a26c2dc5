import type { Command } from 'commander';
import { ArchiveDamaged } from '../store/operator/backup-archive.js';
import { BackupRefused, backupDataDir, type BackupManifest } from '../store/operator/backup.js';
import { restoreDataDir } from '../store/operator/restore.js';
import { lowerThreadPriority } from '../threads/priority.js';
import { globalsOf } from './connect.js';
import type { DeploymentOptions } from './deployment.js';
import { CliError, Exit, checkOutputFile, createIo, success, type Io } from './io.js';
import { deploymentOf } from './operator.js';

/**
 * `scanhub operator backup` and `scanhub operator restore` (docs/backup.md): a SQLite deployment
 * into one file while `serve` runs, and that file into an empty data directory.
 */

const POSTGRES_BACKUP =
  'operator backup copies a SQLite data directory; with --database the deployment lives in PostgreSQL, whose backup is PostgreSQL\'s job: use pg_dump (or WAL archiving for point-in-time recovery), copy --blob-dir, and keep the master key (docs/postgresql.md "Backup and restore")';
const POSTGRES_RESTORE =
  'operator restore restores a SQLite data directory; a PostgreSQL deployment is restored with PostgreSQL\'s own tools (pg_restore, or point-in-time recovery), its --blob-dir copied back, and the same master key (docs/postgresql.md "Backup and restore")';

/** Refuses a PostgreSQL deployment before anything else (the master key is not even needed to say so). */
function refusePostgres(command: Command, message: string): void {
  const { database } = command.optsWithGlobals() as DeploymentOptions;
  if (database?.trim()) throw new CliError(message, Exit.USAGE);
}

/**
 * Runs `work` with an AbortSignal that SIGINT and SIGTERM trigger with `cancelled` (exit 2): the
 * work stops at its next step and removes what it wrote.
 */
async function cancellable<T>(cancelled: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const cancel = () => controller.abort(new CliError(cancelled, Exit.USAGE));
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

/** The backup's failures as the CLI reports them: refusals exit 2, a damaged file or a failure 1. */
function failure(error: unknown, prefix: string): never {
  if (error instanceof CliError) throw error;
  if (error instanceof BackupRefused) throw new CliError(error.message, Exit.USAGE, { cause: error });
  throw new CliError(`${prefix}: ${reason(error)}`, Exit.ERROR, { cause: error });
}

/** One line saying why: a full disk in words, otherwise the error's first line. */
function reason(error: unknown): string {
  const code = (error as { code?: string })?.code;
  const message = String((error as Error)?.message ?? error).split('\n')[0]!;
  if (code === 'ENOSPC' || code === 'SQLITE_FULL') return `the disk is full (${message})`;
  return message;
}

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function summary(manifest: BackupManifest): string {
  const database = manifest.files.find((f) => f.path === 'scanhub.db')!;
  const others = manifest.files.length - 1;
  return `scanhub.db (${megabytes(database.size)}) and ${others} file${others === 1 ? '' : 's'}`;
}

/** Progress of the database copy, on a terminal only: a line per tenth. */
function progressPrinter(io: Io): ((copied: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let shown = 0;
  return (copied, total) => {
    const tenth = total === 0 ? 10 : Math.floor((copied / total) * 10);
    if (tenth > shown) {
      shown = tenth;
      io.err(`Copied ${tenth * 10} % of the database...`);
    }
  };
}

export function registerOperatorBackupCommands(operator: Command): void {
  operator
    .command('backup')
    .description(
      'write one file (tar) with the SQLite deployment of --data-dir while `serve` runs: the database (SQLite online backup), keys, CA, asset files, and a manifest of SHA-256 sums',
    )
    .requiredOption('-o, --output <file>', 'the backup file to write')
    .option('--force', 'replace --output if it exists')
    .action(async (options: { output: string; force?: boolean }, command: Command) => {
      refusePostgres(command, POSTGRES_BACKUP);
      const { dataDir, blobDir } = deploymentOf(command);
      const io = createIo(globalsOf(command));
      await checkOutputFile(options.output, Boolean(options.force));
      // The copy and the hashing (this thread) give way to serve's ingest when they compete for a core.
      lowerThreadPriority();
      const started = performance.now();
      const manifest = await cancellable('cancelled: no backup was written', (signal) =>
        backupDataDir({
          dataDir,
          blobDir,
          output: options.output,
          signal,
          onSnapshot: (bytes) => io.err(`Backing up ${dataDir}: copying the database (${megabytes(bytes)}) as of now; ingest goes on meanwhile...`),
          onProgress: progressPrinter(io),
        }).catch((error: unknown) => failure(error, 'the backup failed and no file was written')),
      );
      if (io.json) io.out(JSON.stringify(manifest, null, 2));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      success(io, `Backed up ${dataDir} to ${options.output} in ${seconds} s: ${summary(manifest)}, SHA-256 sums in its manifest.json.`);
    });

  operator
    .command('restore <file>')
    .description('restore a backup file into --data-dir (new or empty; --force replaces one that is not), verifying every SHA-256 sum and PRAGMA integrity_check first')
    .option('--force', 'replace the data directory if it is not empty (never while a serve holds it)')
    .action(async (file: string, options: { force?: boolean }, command: Command) => {
      refusePostgres(command, POSTGRES_RESTORE);
      const { dataDir, blobDir } = deploymentOf(command);
      const io = createIo(globalsOf(command));
      const manifest = await cancellable(`cancelled: nothing was restored to ${dataDir}`, (signal) =>
        restoreDataDir({
          file,
          dataDir,
          blobDir,
          force: Boolean(options.force),
          signal,
          onCheck: process.stderr.isTTY ? () => io.err('Every SHA-256 sum matches; checking the database with PRAGMA integrity_check...') : undefined,
        }).catch((error: unknown) => {
          if (error instanceof ArchiveDamaged) throw new CliError(`cannot restore ${file}: ${error.message}; nothing was written to ${dataDir}`, Exit.ERROR, { cause: error });
          return failure(error, `the restore failed and nothing was written to ${dataDir}`);
        }),
      );
      if (io.json) io.out(JSON.stringify(manifest, null, 2));
      success(
        io,
        `Restored ${file} (taken ${manifest.created} by scanhub ${manifest.scanhub_version}) into ${dataDir}: ${summary(manifest)}, every SHA-256 sum and PRAGMA integrity_check verified. Start it with \`scanhub serve --data-dir ${dataDir}${blobDir === dataDir ? '' : ` --blob-dir ${blobDir}`}\`.`,
      );
    });
}
