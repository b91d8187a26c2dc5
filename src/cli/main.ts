import { Command, CommanderError, Option } from 'commander';
import { registerApiKeyCommands } from './api-keys/index.js';
import { registerAssetCommands } from './assets/index.js';
import { registerAuditCommand } from './audit/index.js';
import { registerCommandCommands } from './commands/index.js';
import { COMPLETE, completions, registerCompletionCommand } from './completion.js';
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
import { SCANHUB_VERSION } from '../version.js';
import { HELP, examples } from './help.js';
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
    .helpOption('-h, --help', 'show the help of a command')
    .addHelpText(
      'after',
      examples([
        'scanhub serve',
        'scanhub login --url http://127.0.0.1:8080 --email admin@localhost',
        'scanhub gateways create --name dock-1 --usecase inbound --station dock-1',
        'scanhub events list --since 2h',
        'scanhub --version          # or -V: prints scanhub and its version',
      ]),
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp(HELP)
    .exitOverride();

  registerServeCommand(program);
  registerLoginCommands(program);
  registerUserCommands(program);
  registerApiKeyCommands(program);
  registerFeatureCommands(program);
  registerEventCommands(program);
  registerGatewayCommands(program);
  registerDeviceCommands(program);
  registerCommandCommands(program);
  registerOperatorCommands(program);
  registerAssetCommands(program);
  registerJobCommands(program);
  registerAuditCommand(program);
  registerRetentionCommands(program);
  registerWebhookCommands(program);
  registerAlertCommands(program);
  registerSimulateCommand(program);
  registerCompletionCommand(program);
  return program;
}

/** Runs the CLI on argv and sets process.exitCode; never throws. */
export async function run(argv: string[]): Promise<void> {
  // `scanhub events list | head`: a reader that stops early is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? Exit.OK);
    throw error;
  });
  // Answered here, not as a root option: commander would take a root `--version` anywhere on the
  // line, also `operator assets add --version 1.2.0`, whose own flag it is.
  if (argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V')) {
    process.stdout.write(`scanhub ${SCANHUB_VERSION}\n`);
    return;
  }
  if (argv[2] === COMPLETE) {
    const candidates = completions(buildProgram(), argv.slice(3));
    if (candidates.length) process.stdout.write(`${candidates.join('\n')}\n`);
    return;
  }
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
