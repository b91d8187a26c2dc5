import { examples } from '../help.js';
import { InvalidArgumentError, type Command } from 'commander';
import { createCommand, createCommands, getCommand, type Command as SentCommand, type CommandInput } from '../../client/commands.js';
import { MAX_TTL_SECONDS, isFinal } from '../../domain/commands.js';
import { gatewayNames } from '../gateway-refs.js';
import { durationArgument } from '../flags.js';
import { gatewayIds } from '../gateway-refs.js';
import { CliError, Exit, printList, success } from '../io.js';
import { connect, type Session } from '../session.js';
import { commandColumns } from './output.js';

interface SendOptions {
  name: string;
  param: Record<string, string>;
  parameters?: Record<string, unknown>;
  device?: string;
  ttl?: number;
  wait?: boolean;
}

/** How often `--wait` reads the commands that are not final yet. */
const WAIT_POLL_MS = 300;

/** commander parser for repeated `--param key=value`: a string parameter each. */
function paramArgument(text: string, previous: Record<string, string>): Record<string, string> {
  const at = text.indexOf('=');
  if (at < 1) throw new InvalidArgumentError(`"${text}" is not key=value.`);
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
}

/** commander parser for `--parameters`: a JSON object. */
function parametersArgument(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('it is not JSON: give an object such as \'{"template":"pick","fields":{"n":3}}\'.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgumentError('it is not a JSON object.');
  return value as Record<string, unknown>;
}

/** commander parser for `--ttl`: a duration of 1 s to 7 days, in whole seconds. */
function ttlArgument(text: string): number {
  const seconds = Math.ceil(durationArgument(text) / 1000);
  if (seconds < 1 || seconds > MAX_TTL_SECONDS) throw new InvalidArgumentError(`"${text}" is not from 1s to 7d.`);
  return seconds;
}

/** Reads the commands until each is final (SUCCEEDED, FAILED, EXPIRED, CANCELED); returns them so. */
async function untilFinal(session: Session, commands: SentCommand[]): Promise<SentCommand[]> {
  const latest = new Map(commands.map((c) => [c.command_id, c]));
  for (;;) {
    const open = [...latest.values()].filter((c) => !isFinal(c.status));
    if (open.length === 0) return commands.map((c) => latest.get(c.command_id)!);
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    for (const c of open) latest.set(c.command_id, await getCommand(session, c.command_id));
  }
}

/** `scanhub commands send <gateway...>`: queues one command per gateway; `--wait` follows them to their outcome. */
export function registerSendCommand(commands: Command): void {
  commands
    .command('send <gateway...>')
    .description('queue a command for each gateway (by id or name); it is delivered when the gateway is connected and subscribed')
    .requiredOption('--name <name>', 'the command: feedback, display, configure, or a name the gateway knows')
    .option('--param <key=value>', 'a parameter (repeat for more), e.g. --param sequence=OK', paramArgument, {})
    .option('--parameters <json>', 'the parameters as one JSON object (--param entries are added to it)', parametersArgument)
    .option('--device <device>', 'the scanner the command is for, when not the gateway itself')
    .option('--ttl <duration>', 'how long it may wait for the gateway, e.g. 10m, 2h (1s..7d; default 1h)', ttlArgument)
    .option('--wait', 'follow each command to its outcome: exit 0 when all SUCCEEDED, 1 otherwise')
    .addHelpText(
      'after',
      examples([
        'scanhub commands send dock-1 --name feedback --param sequence=OK --wait',
        `scanhub commands send dock-1 dock-2 --name display --parameters '{"template":"pick","fields":{"n":3}}' --device ring-7 --ttl 10m`,
      ]),
    )
    .action(async (refs: string[], options: SendOptions, command: Command) => {
      const session = await connect(command);
      const ids = await gatewayIds(session, refs);
      const input: CommandInput = {
        name: options.name,
        parameters: { ...options.parameters, ...options.param },
        ...(options.device !== undefined ? { device_id: options.device } : {}),
        ...(options.ttl !== undefined ? { ttl_seconds: options.ttl } : {}),
      };
      const sent = ids.length === 1 ? [await createCommand(session, ids[0]!, input)] : await createCommands(session, ids, input);
      if (!options.wait) {
        printList(session.io, sent, commandColumns(session.io, session.io.json ? new Map() : await gatewayNames(session)));
        if (!session.io.json) success(session.io, `Queued ${sent.length === 1 ? 'command' : `${sent.length} commands`} "${options.name}": \`scanhub commands list <gateway>\` shows how far ${sent.length === 1 ? 'it got' : 'they got'}.`);
        return;
      }
      session.io.err(`Queued ${sent.length} command${sent.length === 1 ? '' : 's'}; waiting for the outcome...`);
      const done = await untilFinal(session, sent);
      printList(session.io, done, commandColumns(session.io, session.io.json ? new Map() : await gatewayNames(session)));
      const failed = done.filter((c) => c.status !== 'SUCCEEDED');
      if (failed.length) throw new CliError(`${failed.length} of ${done.length} command${done.length === 1 ? '' : 's'} did not succeed: ${[...new Set(failed.map((c) => c.status))].join(', ')}.`, Exit.ERROR);
    });
}
