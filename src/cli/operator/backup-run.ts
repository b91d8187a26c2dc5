import type { Command } from 'commander';
import { BackupRefused, type BackupManifest } from '../../store/operator/backup.js';
import type { DeploymentOptions } from '../deployment.js';
import { CliError, Exit } from '../io.js';

// What `operator backup` and `operator restore` (docs/backup.md) share: the refusal of PostgreSQL,
// cancellation by signal, how a failure is said, and the summary of a backup file.

/** Refuses a PostgreSQL deployment before anything else (the master key is not even needed to say so). */
export function refusePostgres(command: Command, message: string): void {
  const { database } = command.optsWithGlobals() as DeploymentOptions;
  if (database?.trim()) throw new CliError(message, Exit.USAGE);
}

/**
 * Runs `work` with an AbortSignal that SIGINT and SIGTERM trigger with `cancelled` (exit 2): the
 * work stops at its next step and removes what it wrote.
 */
export async function cancellable<T>(cancelled: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
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
export function failure(error: unknown, prefix: string): never {
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

export const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function summary(manifest: BackupManifest): string {
  const database = manifest.files.find((f) => f.path === 'scanhub.db')!;
  const others = manifest.files.length - 1;
  return `scanhub.db (${megabytes(database.size)}) and ${others} file${others === 1 ? '' : 's'}`;
}
