import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { ASSET_TYPES, type AssetType } from '../../domain/assets.js';
import { registerAssetFile } from '../../store/operator/asset-files.js';
import type { Agreement, Asset } from '../../store/ports/index.js';
import { assetColumns } from '../assets/columns.js';
import { CliError, Exit, formatTime, printList, printObject, success, type Column, type Io } from '../io.js';
import { withOperatorStore } from './store.js';
import { examples } from '../help.js';

/** An asset as the API lists it: without the internal id. */
type PublicAsset = Omit<Asset, 'id'>;

function publicAsset(asset: Asset): PublicAsset {
  const { id: _id, ...rest } = asset;
  return rest;
}

/** The fields of a registered asset: the table's columns and the two checksums. */
const assetFields = (io: Io): Column<PublicAsset>[] => [
  ...assetColumns(io).map((c) => ({ ...c, header: c.header.toLowerCase() })),
  { header: 'file_sha256', value: (a) => a.file_sha256 },
  { header: 'eula_checksum', value: (a) => a.eula_checksum },
];

const agreementColumns = (io: Io): Column<Agreement>[] => [
  { header: 'AGREED_AT', value: (a) => formatTime(io, a.agreed_at) },
  { header: 'CUSTOMER', value: (a) => a.customer_id },
  { header: 'USER_ID', value: (a) => a.user_id },
  { header: 'AGREED_BY', value: (a) => a.agreed_by },
  { header: 'TYPE', value: (a) => a.asset_type },
  { header: 'VERSION', value: (a) => a.asset_version },
  { header: 'EULA', value: (a) => a.eula_version },
  { header: 'EULA_CHECKSUM', value: (a) => a.eula_checksum },
];

/** Reads the EULA as UTF-8 text: its checksum is over exactly the text clients are shown. */
function readEula(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (cause) {
    throw new CliError(`cannot read the EULA file ${file}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`, Exit.USAGE, { cause });
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    if (text.trim() === '') throw new Error('it is empty');
    return text;
  } catch (cause) {
    throw new CliError(`the EULA file ${file} is not usable UTF-8 text: ${(cause as Error).message}`, Exit.USAGE, { cause });
  }
}

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/** `scanhub operator assets add|list|agreements`: assets are deployment-wide, agreements per customer. */
export function registerAssetCommands(operator: Command): void {
  const assets = operator.command('assets').addHelpText('after', examples(['scanhub operator assets list'])).description('downloadable assets (apps, firmware) and the EULA agreements to them');

  assets
    .command('add <file>')
    .addHelpText('after', examples(['scanhub operator assets add mark-fw-2.4.1.bin --type MARK_FIRMWARE --version 2.4.1 --eula-version 7 --eula-file eula.txt']))
    .description('register a file as a version of an asset type; the latest registered version is the default')
    .addOption(new Option('--type <type>', 'asset type').choices([...ASSET_TYPES]).makeOptionMandatory())
    .requiredOption('--version <version>', 'asset version, e.g. 2.4.1')
    .requiredOption('--eula-version <version>', 'version of the EULA that governs this asset')
    .requiredOption('--eula-file <file>', 'the EULA text (UTF-8)')
    .action(async (file: string, options: { type: AssetType; version: string; eulaVersion: string; eulaFile: string }, command: Command) => {
      for (const [flag, value] of [['--version', options.version], ['--eula-version', options.eulaVersion]] as const) {
        if (!VERSION.test(value)) throw new CliError(`${flag} "${value}" is not a version: use 1-64 letters, digits, ".", "_", "+" or "-"`, Exit.USAGE);
      }
      const eulaText = readEula(options.eulaFile);
      await withOperatorStore(command, async (store, io, dataDir) => {
        let asset: Asset;
        try {
          asset = await registerAssetFile(
            store.assets,
            dataDir,
            { assetType: options.type, assetVersion: options.version, eulaVersion: options.eulaVersion, eulaText, file },
            Date.now(),
          );
        } catch (cause) {
          throw new CliError(`cannot register ${file}: ${(cause as Error).message}`, Exit.ERROR, { cause });
        }
        printObject(io, publicAsset(asset), assetFields(io));
        success(io, `Registered ${asset.asset_type} ${asset.asset_version} (${asset.file_name}, ${asset.file_size} bytes); it is now the default of its type.`);
      });
    });

  assets
    .command('list')
    .addHelpText('after', examples(['scanhub operator assets list']))
    .description('list the registered assets, newest version of each type first')
    .action(async (_options: unknown, command: Command) => {
      await withOperatorStore(command, async (store, io) => {
        printList(io, (await store.assets.list()).map(publicAsset), assetColumns(io));
      });
    });

  assets
    .command('agreements')
    .addHelpText('after', examples(['scanhub operator assets agreements --customer acme']))
    .description('list the EULA agreements given for downloads, oldest first')
    .option('--customer <customer_id>', 'only those of this customer')
    .action(async (options: { customer?: string }, command: Command) => {
      // The program's global --customer takes the flag wherever it stands; either holds the value.
      const customer = options.customer ?? (command.optsWithGlobals() as { customer?: string }).customer;
      await withOperatorStore(command, async (store, io) => printList(io, await store.assets.agreements(customer), agreementColumns(io)));
    });
}
