import { Option, type Command } from 'commander';
import { ApiError, NetworkError } from '../../client/api.js';
import { streamEvents, type ApiEvent } from '../../client/events.js';
import { durationArgument } from '../flags.js';
import { gatewayIdOf, gatewayNames } from '../gateway-refs.js';
import { rowCells } from '../io.js';
import { connect } from '../session.js';
import { eventColumns } from './printer.js';
import { examples } from '../help.js';

/** Waits before connecting again after a failed attempt, growing to the last. */
const RECONNECT_DELAYS_MS = [250, 500, 1_000, 2_000, 5_000];

interface TailOptions {
  gateway?: string;
}

/**
 * `scanhub events tail`: events as they are stored, from the live event stream, until interrupted;
 * it reconnects with the id of the last event printed, so nothing is missed or printed twice.
 */
export function registerTailCommand(events: Command): void {
  events
    .command('tail')
    .addHelpText('after', examples(['scanhub events tail', 'scanhub events tail --gateway dock-1 --json']))
    .description('print events as they are stored, in the order they were stored, until interrupted (--json: one object per line)')
    .option('--gateway <gateway>', 'only events of this gateway (id or name)')
    // Before the live stream, tail polled every --interval; scripts that pass it keep working.
    .addOption(new Option('--interval <duration>', 'ignored: events arrive as they are stored').argParser(durationArgument).hideHelp())
    .action(async (options: TailOptions, command: Command) => {
      const session = await connect(command);
      const { io } = session;
      // Names of the gateways there are now; a gateway added while tailing shows its id.
      const columns = eventColumns(io, io.json ? new Map() : await gatewayNames(session));
      const gateway = options.gateway === undefined ? undefined : await gatewayIdOf(session, options.gateway);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      if (io.tty) io.err(`Waiting for events${options.gateway ? ` of gateway ${options.gateway}` : ''}; Ctrl-C stops.`);

      const print = (event: ApiEvent) =>
        io.out(io.json ? JSON.stringify(event) : rowCells(event, columns).join(io.tty ? '  ' : '\t'));
      let lastEventId: string | undefined;
      let failures = 0;
      let offline = false;
      try {
        while (!stop.signal.aborted) {
          try {
            const items = streamEvents(session, { gatewayId: gateway, lastEventId, signal: stop.signal });
            for await (const item of items) {
              if (failures > 0 || offline) io.err('Connection restored.');
              failures = 0;
              offline = false;
              if (item.kind === 'event') {
                // Frames of other kinds (`event: alert`, asked for with ?alerts=true) are not events: never printed as one.
                if (item.event !== undefined) continue;
                print(JSON.parse(item.data) as ApiEvent);
                lastEventId = item.id;
              } else if (item.text.includes('Last-Event-ID') || item.text.startsWith('access ended')) {
                // The server ends the stream (shutting down, this client too slow): say why; the loop resumes.
                if (io.tty) io.err(`The server ended the stream: ${item.text.replace(/, resume with Last-Event-ID .*$/, '')}.`);
              }
            }
          } catch (error) {
            if (stop.signal.aborted) break;
            if (error instanceof ApiError && error.status === 400 && lastEventId !== undefined) {
              // The deployment no longer knows where this tail was (a restored backup, a move to
              // PostgreSQL): go on from now, and say that events may have been missed.
              io.err(`${error.details.replace(/\.$/, '')}; going on with events stored from now, some stored meanwhile may be missing.`);
              lastEventId = undefined;
              continue;
            }
            // Unreachable, or shutting down or without its database for a moment (503): try again; other refusals end the command.
            const transient = error instanceof NetworkError || (error instanceof ApiError && error.status === 503);
            if (!transient) throw error;
            if (!offline) io.err(`${error instanceof ApiError ? `${error.title}: ${error.details}` : error.message}; reconnecting…`);
            offline = true;
          }
          if (stop.signal.aborted) break;
          // A stream the server ended is resumed at once; a failed connection after a growing wait.
          const delay = offline ? RECONNECT_DELAYS_MS[Math.min(failures++, RECONNECT_DELAYS_MS.length - 1)]! : 0;
          await new Promise<void>((done) => {
            const timer = setTimeout(done, delay);
            stop.signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
          });
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
