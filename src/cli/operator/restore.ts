import type { Command } from 'commander';
import { ArchiveDamaged } from '../../store/operator/backup-archive.js';
import { restoreDataDir } from '../../store/operator/restore.js';
import { CliError, Exit, createIo, stderrIsTerminal, success } from '../io.js';
import { globalsOf } from '../session.js';
import { cancellable, failure, refusePostgres, summary } from './backup-run.js';
import { deploymentOf } from './store.js';
import { examples } from '../help.js';

const POSTGRES_RESTORE =
  'operator restore restores a SQLite data directory; a PostgreSQL deployment is restored with PostgreSQL\'s own tools (pg_restore, or point-in-time recovery), its --blob-dir copied back, and the same master key (docs/postgresql.md "Backup and restore")';

/** `scanhub operator restore` (docs/backup.md): a backup file into an empty data directory. */
export function registerRestoreCommand(operator: Command): void {
  operator
    .command('restore <file>')
    .addHelpText('after', examples(['scanhub operator --data-dir /var/lib/scanhub restore scanhub-backup.tar']))
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
          onCheck: stderrIsTerminal() ? () => io.err('Every SHA-256 sum matches; checking the database with PRAGMA integrity_check...') : undefined,
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
