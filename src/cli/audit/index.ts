import { Command, Option } from 'commander';
import { nextPage, type List } from '../../client/api.js';
import { listAuditLog, type AuditItem } from '../../client/audit.js';
import { AUDIT_ACTIONS } from '../../domain/audit.js';
import { addRangeOptions, limitArgument, rangeQuery, type RangeOptions } from '../flags.js';
import { formatTime, printList, type Column, type Io } from '../io.js';
import { connect } from '../session.js';
import { gatewayLabel, gatewayNames } from '../gateway-refs.js';
import { examples } from '../help.js';

interface AuditOptions extends RangeOptions {
  action?: string;
  limit?: number;
}

/** The target as a person reads it: a gateway by its name (today's, or the one its entry recorded if it is gone) beside its short id. */
function targetOf(entry: AuditItem, names: ReadonlyMap<string, string>): string {
  if (!entry.target) return '';
  if (entry.target.type !== 'gateway') return `${entry.target.type} ${entry.target.id}`;
  const recorded = typeof entry.details?.name === 'string' ? entry.details.name : undefined;
  const known = names.has(entry.target.id) || recorded === undefined ? names : new Map([[entry.target.id, recorded]]);
  return `gateway ${gatewayLabel(entry.target.id, known)}`;
}

const columns = (io: Io, names: ReadonlyMap<string, string>): Column<AuditItem>[] => [
  { header: 'TIME', value: (e) => formatTime(io, e.time) },
  { header: 'ACTION', value: (e) => e.action },
  { header: 'ACTOR', value: (e) => (e.actor.email ? `${e.actor.type} ${e.actor.email}` : `${e.actor.type} ${e.actor.id}`) },
  { header: 'TARGET', value: (e) => targetOf(e, names) },
  { header: 'IP', value: (e) => e.ip },
  { header: 'DETAILS', value: (e) => (e.details ? JSON.stringify(e.details) : '') },
];

/** `scanhub audit`: the customer's audit log, newest first (needs audit.read, ADMIN_ROLE). */
export function registerAuditCommand(program: Command): void {
  addRangeOptions(
    program.command('audit').description('who did what: the audit log of the customer, newest first (administrators)'),
    '1d',
  )
    .addOption(new Option('--action <action>', 'only entries of this action').choices(AUDIT_ACTIONS))
    .option('--limit <n>', 'print at most N entries, 1..500 (default: every entry of the range)', limitArgument)
    .addHelpText(
      'after',
      examples(
        ['scanhub audit --since 7d --action user.deleted', 'scanhub audit --since 2026-11-01 --until 2026-11-08 --json'],
        'Times: how long ago (30m, 2h, 7d), ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, or now.\n' +
          'Exit codes: 0 ok (no entries too), 1 error, 2 usage, 4 not logged in or not an administrator.',
      ),
    )
    .action(async (options: AuditOptions, command: Command) => {
      const session = await connect(command);
      const now = Date.now();
      const sinceGiven = options.since !== undefined || options.from !== undefined;
      const range = rangeQuery(sinceGiven ? options : { ...options, since: '1d' }, now);
      const [start, end] = [range.start_time_millis!, range.end_time_millis];
      const max = options.limit ?? Infinity;
      const query = { start_time: start, end_time: end, action: options.action, limit: options.limit };
      let page = await listAuditLog(session, query);
      const entries = [...page.items];
      while (entries.length < max && page.links.next) {
        page = await nextPage<List<AuditItem>>(session.client, page.links.next);
        entries.push(...page.items);
      }
      const printed = entries.slice(0, max);
      const gatewaysNamed = !session.io.json && printed.some((e) => e.target?.type === 'gateway');
      printList(session.io, printed, columns(session.io, gatewaysNamed ? await gatewayNames(session) : new Map()));
      if (entries.length > printed.length || (printed.length === max && page.links.next)) {
        session.io.err(`Printed the newest ${printed.length} entries of the range; without --limit every one is printed.`);
      }
    });
}
