import { InvalidArgumentError, Option, type Command } from 'commander';
import { NetworkError } from '../client/api.js';
import { TailCursor } from '../domain/tail-cursor.js';
import { connect, type Session } from './connect.js';
import { durationArgument, eventColumns, type ApiEvent, type EventPage } from './event-output.js';
import { gatewayIdOf } from './gateway-refs.js';

/** The shortest time between polls: each poll is a request, and a tail may run for hours. */
const MIN_INTERVAL_MS = 100;

/** commander parser for `--interval`: a duration of at least MIN_INTERVAL_MS. */
function intervalArgument(text: string): number {
  const ms = durationArgument(text);
  if (ms < MIN_INTERVAL_MS) throw new InvalidArgumentError(`"${text}" is shorter than the minimum of ${MIN_INTERVAL_MS}ms.`);
  return ms;
}

interface TailOptions {
  gateway?: string;
  interval: number;
}

/** The server's clock from a response's Date header (1 s resolution), else the local one. */
async function serverNow(session: Session): Promise<number> {
  const response = await session.client.request('GET', `${session.base}/events`, { query: { limit: 1 } });
  const date = Date.parse(String(response.headers.date ?? ''));
  return Number.isNaN(date) ? Date.now() : date - 1000;
}

/** Every event since `start` (all pages: a burst may exceed one). */
async function poll(session: Session, start: number, gateway: string | undefined): Promise<ApiEvent[]> {
  let page = await session.client.get<EventPage>(`${session.base}/events`, { start_time_millis: start, gateway_id: gateway });
  const events = [...page.items];
  while (page.links.next) {
    page = await session.client.get<EventPage>(page.links.next);
    events.push(...page.items);
  }
  return events;
}

/** `scanhub events tail`: prints new events as they arrive until interrupted. */
export function registerEventTailCommand(events: Command): void {
  events
    .command('tail')
    .description('print new events as they arrive, oldest first, until interrupted (--json: one object per line)')
    .option('--gateway <gateway>', 'only events of this gateway (id or name)')
    .addOption(new Option('--interval <duration>', `time between polls, at least ${MIN_INTERVAL_MS}ms`).argParser(intervalArgument).default(2000, '2s'))
    .action(async (options: TailOptions, command: Command) => {
      const session = await connect(command);
      const { io } = session;
      const columns = eventColumns(io);
      const gateway = options.gateway === undefined ? undefined : await gatewayIdOf(session, options.gateway);
      const cursor = new TailCursor(await serverNow(session));
      let stopped = false;
      let wake: () => void = () => {};
      const stop = () => {
        stopped = true;
        wake();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      if (io.tty) io.err(`Waiting for events${options.gateway ? ` of gateway ${options.gateway}` : ''}; Ctrl-C stops.`);

      let offline = false;
      while (!stopped) {
        try {
          const fresh = cursor.accept(await poll(session, cursor.start, gateway));
          if (offline) io.err('Connection restored.');
          offline = false;
          for (const event of fresh) {
            io.out(io.json ? JSON.stringify(event) : columns.map((c) => String(c.value(event) ?? '').replace(/[\t\r\n]/g, ' ')).join(io.tty ? '  ' : '\t'));
          }
        } catch (error) {
          if (!(error instanceof NetworkError)) throw error;
          if (!offline) io.err(`${error.message}; retrying every ${options.interval} ms…`);
          offline = true;
        }
        if (stopped) break;
        await new Promise<void>((done) => {
          const timer = setTimeout(done, options.interval);
          wake = () => (clearTimeout(timer), done());
        });
      }
    });
}
