import { Command, CommanderError, Option } from 'commander';
import { registerApiKeyCommands } from './api-keys/index.js';
import { registerAssetCommands } from './assets/index.js';
import { registerAuditCommand } from './audit/index.js';
import { registerDeviceCommands } from './devices/index.js';
import { registerEventCommands } from './events/index.js';
import { registerFeatureCommands } from './features/index.js';
import { registerGatewayCommands } from './gateways/index.js';
import { CliError, Exit, describeError } from './io.js';
import { registerJobCommands } from './jobs/index.js';
import { registerLoginCommands } from './login/index.js';
import { registerOperatorCommands } from './operator/index.js';
import { registerRetentionCommands } from './retention/index.js';
import { registerServeCommand } from './serve/index.js';
import { registerSimulateCommand } from './simulate/index.js';
import { registerUserCommands } from './users/index.js';
import { registerWebhookCommands } from './webhooks/index.js';
import { registerAlertCommands } from './alerts/index.js';

/** The `scanhub` program with every command group registered. */
export function buildProgram(): Command {
  const program = new Command('scanhub')
    .description('scanhub: the service (`serve`) and a client of any scanhub deployment')
    .option('--url <url>', 'base URL of the deployment (env SCANHUB_URL)')
    .option('--token <token>', 'IdToken or API key to use (env SCANHUB_TOKEN; prefer the environment: flags show in `ps`)')
    .option('--customer <id>', 'customer id (env SCANHUB_CUSTOMER)')
    .option('--ca-cert <file>', "CA certificate (PEM) of an HTTPS deployment, as `scanhub operator ca` prints it (env SCANHUB_CA_CERT; `login` saves it)")
    .option('--json', 'print JSON: lists as arrays of the API items, everything else as the API response')
    .addOption(new Option('--debug', 'print stacks and requests on errors'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  registerServeCommand(program);
  registerLoginCommands(program);
  registerUserCommands(program);
  registerApiKeyCommands(program);
  registerFeatureCommands(program);
  registerEventCommands(program);
  registerGatewayCommands(program);
  registerDeviceCommands(program);
  registerOperatorCommands(program);
  registerAssetCommands(program);
  registerJobCommands(program);
  registerAuditCommand(program);
  registerRetentionCommands(program);
  registerWebhookCommands(program);
  registerAlertCommands(program);
  registerSimulateCommand(program);
  return program;
}

/** Runs the CLI on argv and sets process.exitCode; never throws. */
export async function run(argv: string[]): Promise<void> {
  // `scanhub events list | head`: a reader that stops early is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? Exit.OK);
    throw error;
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage errors were already printed by commander.
      process.exitCode = error.exitCode === 0 ? Exit.OK : Exit.USAGE;
      return;
    }
    const { message, exitCode } = describeError(error);
    process.stderr.write(`scanhub: ${message}\n`);
    if (program.opts().debug && error instanceof Error && !(error instanceof CliError)) {
      process.stderr.write(`${error.stack ?? ''}\n`);
    }
    process.exitCode = exitCode;
  }
}
