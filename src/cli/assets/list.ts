import { Option, type Command } from 'commander';
import { listAssets } from '../../client/assets.js';
import { ASSET_TYPES } from '../../domain/assets.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { assetColumns } from './columns.js';
import { examples } from '../help.js';

/** `scanhub assets list`. */
export function registerListCommand(assets: Command): void {
  assets
    .command('list')
    .addHelpText('after', examples(['scanhub assets list']))
    .description('list the assets and versions available for download')
    .addOption(new Option('--type <type>', 'only this asset type').choices([...ASSET_TYPES]))
    .action(async (options: { type?: string }, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listAssets(session, options.type), assetColumns(session.io));
    });
}
