import type { Command } from 'commander';
import { backupDataDir } from '../../store/operator/backup.js';
import { lowerThreadPriority } from '../../threads/priority.js';
import { createIo, writeOutput, stderrIsTerminal, success, type Io } from '../io.js';
import { globalsOf } from '../session.js';
import { cancellable, failure, megabytes, refusePostgres, summary } from './backup-run.js';
import { deploymentOf } from './store.js';
import { examples } from '../help.js';

const POSTGRES_BACKUP =
  'operator backup copies a SQLite data directory; with --database the deployment lives in PostgreSQL, whose backup is PostgreSQL\'s job: use pg_dump (or WAL archiving for point-in-time recovery), copy --blob-dir, and keep the master key (docs/postgresql.md "Backup and restore")';

/** Progress of the database copy, on a terminal only: a line per tenth. */
function progressPrinter(io: Io): ((copied: number, total: number) => void) | undefined {
  if (!stderrIsTerminal()) return undefined;
  let shown = 0;
  return (copied, total) => {
    const tenth = total === 0 ? 10 : Math.floor((copied / total) * 10);
    if (tenth > shown) {
      shown = tenth;
      io.err(`Copied ${tenth * 10} % of the database...`);
    }
  };
}

/** `scanhub operator backup` (docs/backup.md): a SQLite deployment into one file while `serve` runs. */
export function registerBackupCommand(operator: Command): void {
  operator
    .command('backup')
    .addHelpText('after', examples(['scanhub operator --data-dir /var/lib/scanhub backup -o /backup/scanhub-$(date +%F).tar', 'scanhub operator backup -o - | ssh backup-host "cat > scanhub.tar"']))
    .description(
      'write one file (tar) with the SQLite deployment of --data-dir while `serve` runs: the database (SQLite online backup), keys, CA, asset files, and a manifest of SHA-256 sums',
    )
    .requiredOption('-o, --output <file>', 'the backup file to write, - for stdout')
    .option('--force', 'replace --output if it exists')
    .action(async (options: { output: string; force?: boolean }, command: Command) => {
      refusePostgres(command, POSTGRES_BACKUP);
      const { dataDir, blobDir } = deploymentOf(command);
      const io = createIo(globalsOf(command));
      await writeOutput(options.output, Boolean(options.force), async (output, name) => {
        // The copy and the hashing (this thread) give way to serve's ingest when they compete for a core.
        lowerThreadPriority();
        const started = performance.now();
        const manifest = await cancellable('cancelled: no backup was written', (signal) =>
          backupDataDir({
            dataDir,
            blobDir,
            output,
            signal,
            onSnapshot: (bytes) => io.err(`Backing up ${dataDir}: copying the database (${megabytes(bytes)}) as of now; ingest goes on meanwhile...`),
            onProgress: progressPrinter(io),
          }).catch((error: unknown) => failure(error, 'the backup failed and no file was written')),
        );
        if (io.json && name !== 'stdout') io.out(JSON.stringify(manifest, null, 2));
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        success(io, `Backed up ${dataDir} to ${name} in ${seconds} s: ${summary(manifest)}, SHA-256 sums in its manifest.json.`);
      });
    });
}
