import type { Command } from 'commander';
import type { DeploymentOptions } from '../deployment.js';
import { CliError, Exit, createIo, printList, stderrIsTerminal, success } from '../io.js';
import { globalsOf } from '../session.js';
import { deploymentOf } from './store.js';
import { examples } from '../help.js';

/** `scanhub operator migrate`: a stopped single-box deployment copied into an empty PostgreSQL database. */
export function registerMigrateCommand(operator: Command): void {
  operator
    .command('migrate')
    .addHelpText('after', examples(['scanhub operator --data-dir ./scanhub-data --database postgres://scanhub@db/scanhub migrate']))
    .description(
      'copy the stopped SQLite deployment of --data-dir into the empty PostgreSQL database of --database (with the master key), counts verified; files go to --blob-dir when given',
    )
    .action(async (_options: unknown, command: Command) => {
      const { database } = command.optsWithGlobals() as DeploymentOptions;
      if (!database?.trim()) {
        throw new CliError('operator migrate needs --database URL (or SCANHUB_DATABASE_URL): the empty PostgreSQL database to copy into', Exit.USAGE);
      }
      const { locator, dataDir, blobDir } = deploymentOf(command);
      if (locator.kind !== 'postgres') throw new CliError('operator migrate copies into PostgreSQL only', Exit.USAGE);
      const io = createIo(globalsOf(command));
      // Loaded here: node-postgres would slow the start of every other command.
      const { MigrationRefused, migrateToPostgres } = await import('../../store/operator/migrate.js');
      let summary: Awaited<ReturnType<typeof migrateToPostgres>>;
      try {
        // Progress only for a person watching: a million events take about half a minute.
        const onTable = stderrIsTerminal() ? (table: string, rows: number) => io.err(`Copying ${table}: ${rows} row${rows === 1 ? '' : 's'}...`) : undefined;
        summary = await migrateToPostgres({ dataDir, url: locator.url, masterKey: locator.masterKey, blobDir, onTable });
      } catch (error) {
        if (error instanceof MigrationRefused) throw new CliError(error.message, Exit.USAGE, { cause: error });
        const reason = String((error as Error)?.message ?? error).split('\n')[0];
        throw new CliError(`the migration failed and nothing was stored in PostgreSQL: ${reason}`, Exit.ERROR, { cause: error });
      }
      printList(io, summary.tables, [
        { header: 'TABLE', value: (t) => t.table },
        { header: 'SQLITE', value: (t) => t.sqlite },
        { header: 'POSTGRESQL', value: (t) => t.postgresql },
      ]);
      if (summary.replacedNul > 0) {
        const [values, hold] = summary.replacedNul === 1 ? ['text value', 'it holds'] : ['text values', 'they hold'];
        io.err(`${summary.replacedNul} ${values} held NUL characters, which PostgreSQL cannot store: ${hold} U+FFFD there instead.`);
      }
      const { files } = summary;
      if (files.kind === 'kept') {
        io.err(
          `The export, asset and package files stay in ${files.dir} (exports/, assets/, packages/): give every instance a --blob-dir that holds them (copy them to the shared directory, or mount this one there).`,
        );
      } else {
        const already = files.present > 0 ? ` (${files.present} were there already)` : '';
        io.err(`Copied ${files.files.length} files (exports/, assets/, packages/) from ${files.from} to ${files.to}${already}.`);
      }
      success(io, `Migrated ${dataDir} into PostgreSQL, counts verified: start every instance with this --database, the same master key and --blob-dir ${blobDir}.`);
    });
}
