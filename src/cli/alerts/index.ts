import { examples } from '../help.js';
import { Option, type Command } from 'commander';
import { createAlertRule, deleteAlertRule, listAlertRules, listAlerts, type Alert, type AlertRule } from '../../client/alerts.js';
import { ALERT_KINDS } from '../../domain/alerts.js';
import { durationArgument } from '../flags.js';
import { gatewayIds } from '../gateway-refs.js';
import { resolveJob } from '../jobs/arguments.js';
import { formatTime, printList, success, type Column, type Io } from '../io.js';
import { connect } from '../session.js';

const alertColumns = (io: Io): Column<Alert>[] => [
  { header: 'ID', value: (a) => a.alert_id },
  { header: 'KIND', value: (a) => a.kind },
  { header: 'SUBJECT', value: (a) => `${a.subject.type} ${String(a.details.gateway_name ?? a.subject.id)}` },
  { header: 'STATE', value: (a) => a.state },
  { header: 'OPENED', value: (a) => formatTime(io, a.opened) },
  { header: 'RESOLVED', value: (a) => formatTime(io, a.resolved) },
];

const ruleColumns = (io: Io): Column<AlertRule>[] => [
  { header: 'ID', value: (r) => r.rule_id },
  { header: 'KIND', value: (r) => r.kind },
  {
    header: 'PARAMETERS',
    value: (r) =>
      [
        r.job_config_id !== undefined ? `job config ${r.job_config_id}` : '',
        r.after_seconds !== undefined ? `after ${r.after_seconds}s` : '',
        r.below_percent !== undefined ? `below ${r.below_percent}%` : '',
        r.gateway_ids ? `gateways ${r.gateway_ids.join(',')}` : '',
      ]
        .filter(Boolean)
        .join(', '),
  },
  { header: 'CREATED', value: (r) => formatTime(io, r.created) },
];

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `scanhub alerts list|rules list|rules create|rules delete` (docs/alerts.md). */
export function registerAlertCommands(program: Command): void {
  const alerts = program
    .command('alerts')
    .description('alerts and the rules that open them (gateways offline, low batteries, jobs open too long, silent stations)')
    .addHelpText('after', examples(['scanhub alerts rules create --kind gateway_offline --after 60s', 'scanhub alerts list --state OPEN']));
  alerts
    .command('list')
    .description('list the alerts, newest first')
    .addOption(new Option('--state <state>', 'only OPEN or RESOLVED ones').choices(['OPEN', 'RESOLVED']))
    .addHelpText('after', '\nExample:\n  scanhub alerts list --state OPEN')
    .action(async (options: { state?: 'OPEN' | 'RESOLVED' }, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listAlerts(session, options.state), alertColumns(session.io));
    });
  const rules = alerts.command('rules').description('the rules that open alerts').addHelpText('after', examples(['scanhub alerts rules create --kind device_low_battery --below 20']));
  rules
    .command('list')
    .description('list the alert rules')
    .addHelpText('after', '\nExample:\n  scanhub alerts rules list --json')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listAlertRules(session), ruleColumns(session.io));
    });
  rules
    .command('create')
    .description('create an alert rule')
    .addOption(new Option('--kind <kind>', 'what the rule watches').choices([...ALERT_KINDS]).makeOptionMandatory())
    .option('--after <duration>', 'gateway_offline, station_silent: how long a gateway may be silent; job_open_too_long: how long a job may stay open (60s, 5m, 1h)', durationArgument)
    .option('--below <percent>', 'device_low_battery: the battery percentage below which an alert opens', (text) => Number(text))
    .option('--gateway <id>', 'a gateway by name or id; gateway_offline: only these (repeatable; default every gateway); station_silent: those watched (repeatable, at least one)', collect)
    .option('--job-config <id>', 'job_open_too_long: the job configuration (name or id) whose jobs are watched')
    .addHelpText(
      'after',
      [
        '\nExamples:',
        '  scanhub alerts rules create --kind gateway_offline --after 60s',
        '  scanhub alerts rules create --kind device_low_battery --below 20',
        '  scanhub alerts rules create --kind job_open_too_long --job-config picking --after 30m',
        '  scanhub alerts rules create --kind station_silent --gateway dock-1 --after 5m',
      ].join('\n'),
    )
    .action(async (options: { kind: (typeof ALERT_KINDS)[number]; after?: number; below?: number; gateway?: string[]; jobConfig?: string }, command: Command) => {
      const session = await connect(command);
      const rule = await createAlertRule(session, {
        kind: options.kind,
        ...(options.jobConfig !== undefined ? { job_config_id: (await resolveJob(session, options.jobConfig)).job_config_id } : {}),
        ...(options.after !== undefined ? { after_seconds: Math.round(options.after / 1000) } : {}),
        ...(options.below !== undefined ? { below_percent: options.below } : {}),
        ...(options.gateway ? { gateway_ids: await gatewayIds(session, options.gateway) } : {}),
      });
      if (session.io.json) session.io.out(JSON.stringify(rule, null, 2));
      else session.io.out(rule.rule_id);
      success(session.io, `Created alert rule ${rule.rule_id} (${rule.kind}): its alerts go to the webhooks that take alert.opened and alert.resolved.`);
    });
  rules
    .command('delete <rule>')
    .description('delete an alert rule, by id (its alerts stay listed)')
    .addHelpText('after', '\nExample:\n  scanhub alerts rules delete 5b0e2c1a-7d4f-4e8b-9a3c-1f2d3e4a5b6c')
    .action(async (id: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      await deleteAlertRule(session, id);
      success(session.io, `Deleted alert rule ${id}.`);
    });
}
