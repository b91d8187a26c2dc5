import type { Command } from 'commander';
import { BULK_CREATE_MAX, bulkCreateGateways } from '../../client/gateways.js';
import { CliError, Exit, printList, success } from '../io.js';
import { connect } from '../session.js';
import { readGatewayFile } from './gateway-file.js';
import { gatewayColumns } from './output.js';
import { examples } from '../help.js';

/** `scanhub gateways bulk-create --file <file>`. */
export function registerBulkCreateCommand(gateways: Command): void {
  gateways
    .command('bulk-create')
    .addHelpText('after', examples(['scanhub gateways bulk-create --file gateways.csv']))
    .description(`create up to ${BULK_CREATE_MAX} gateways from a file, all or none`)
    .requiredOption('--file <file>', 'CSV with the header row name,usecase,station, or JSON (an array of {name, usecase, station})')
    .action(async (options: { file: string }, command: Command) => {
      const session = await connect(command);
      const drafts = readGatewayFile(options.file);
      if (drafts.length > BULK_CREATE_MAX) {
        throw new CliError(`${options.file} lists ${drafts.length} gateways; at most ${BULK_CREATE_MAX} are created at once: split the file`, Exit.USAGE);
      }
      const created = await bulkCreateGateways(session, drafts);
      printList(session.io, created, gatewayColumns(session.io));
      success(session.io, `Created ${created.length} gateway${created.length === 1 ? '' : 's'}.`);
    });
}
