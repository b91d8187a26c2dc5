import { createHash } from 'node:crypto';
import { createReadStream, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { generateDownloadUrl, listAssets, type AssetItem } from '../../client/assets.js';
import { whoAmI } from '../../client/auth.js';
import { ASSET_TYPES } from '../../domain/assets.js';
import { CliError, Exit, STDOUT, promptYesNo, success, writeOutput, type Io } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

interface DownloadOptions {
  type: string;
  version?: string;
  output?: string;
  acceptEula?: boolean;
  agreedBy?: string;
  force?: boolean;
}

/** Shows the EULA on the terminal and asks for agreement; `--accept-eula` agrees without asking. */
async function agreeToEula(io: Io, asset: AssetItem, accepted: boolean | undefined): Promise<void> {
  if (accepted) return;
  io.err(`End-user licence agreement, version ${asset.eula_version}, of ${asset.asset_type} ${asset.asset_version}:\n`);
  io.err(asset.eula_text.trimEnd() + '\n');
  if (!(await promptYesNo(io, `Do you agree to this EULA (version ${asset.eula_version})?`, '--accept-eula'))) {
    throw new CliError('cancelled: the EULA was not accepted', Exit.USAGE);
  }
}

/** A progress line on a terminal, rewritten in place; nothing when piped. */
function progressReporter(io: Io): (received: number, total: number | undefined) => void {
  if (!io.tty) return () => {};
  let shown = -1;
  return (received, total) => {
    const percent = total ? Math.floor((received / total) * 100) : -1;
    if (percent === shown && received !== total) return;
    shown = percent;
    process.stderr.write(`\rDownloading… ${total ? `${percent}% of ${total} bytes` : `${received} bytes`}`);
    if (received === total) process.stderr.write('\n');
  };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** `scanhub assets download`: agree to the EULA, download, verify the SHA-256. */
export function registerDownloadCommand(assets: Command): void {
  assets
    .command('download')
    .addHelpText('after', examples(['scanhub assets download --type MARK_FIRMWARE --accept-eula -o mark-fw.bin']))
    .description('agree to the EULA of an asset and download it')
    .addOption(new Option('--type <type>', 'asset type').choices([...ASSET_TYPES]).makeOptionMandatory())
    .option('--version <version>', 'asset version (default: the latest)')
    .option('-o, --output <file>', 'where to write the file, - for stdout (default: its own name in the current directory)')
    .option('--accept-eula', 'agree to the EULA without being asked (required when not interactive)')
    .option('--agreed-by <email>', 'e-mail address of who agrees (default: yours)')
    .option('--force', 'overwrite the output file if it exists')
    .action(async (options: DownloadOptions, command: Command) => {
      const session = await connect(command);
      const { io, client } = session;
      if (!options.acceptEula && !io.interactive) throw new CliError('--accept-eula required when not running interactively', Exit.USAGE);
      const candidates = await listAssets(session, options.type);
      const asset = candidates.find((a) => (options.version === undefined ? a.default : a.asset_version === options.version));
      if (!asset) {
        const known = candidates.map((a) => a.asset_version).join(', ');
        throw new CliError(
          `no ${options.type} ${options.version === undefined ? 'asset' : `version "${options.version}"`} is available${known ? ` (versions: ${known})` : ''}`,
        );
      }
      const output = options.output ?? asset.file_name;
      await writeOutput(output === STDOUT ? output : resolve(output), Boolean(options.force), async (file, name) => {
        await agreeToEula(io, asset, options.acceptEula);
        const agreedBy = options.agreedBy ?? (await whoAmI(session)).email;
        const answer = await generateDownloadUrl(session, {
          eula_version: asset.eula_version,
          eula_checksum: asset.eula_checksum,
          asset_type: asset.asset_type,
          agreed_by: agreedBy,
          asset_version: asset.asset_version,
        });
        // Written beside the target and renamed once verified: an interrupted download leaves no half file under the name.
        const partial = `${file}.part`;
        try {
          const bytes = await client.download(answer.download_url, partial, progressReporter(io));
          const digest = await sha256Of(partial);
          if (digest !== asset.file_sha256) throw new CliError(`the download is damaged: its SHA-256 is ${digest}, expected ${asset.file_sha256}`);
          renameSync(partial, file);
          if (io.json && name !== 'stdout') io.out(JSON.stringify(answer, null, 2));
          success(io, `Agreed to EULA ${asset.eula_version} as ${agreedBy}; wrote ${asset.asset_type} ${asset.asset_version} (${bytes} bytes, SHA-256 verified) to ${name}.`);
        } finally {
          rmSync(partial, { force: true });
        }
      });
    });
}
