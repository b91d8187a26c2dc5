import { Option, type Command } from 'commander';
import { setUpGateways } from '../../simulator/gateways.js';
import { runSimulation, type SimulationSummary } from '../../simulator/run.js';
import { CliError, Exit, printObject, stderrIsTerminal, success, type Io } from '../io.js';
import { connect } from '../session.js';
import { backdate, duration, positiveInteger, rate } from './arguments.js';
import { examples } from '../help.js';

interface SimulateOptions {
  gateways: number;
  rate: number;
  duration: number;
  prefix: string;
  usecase: string;
  station?: string;
  jobStart?: string;
  jobEnd?: string;
  mqttEndpoint?: string;
  reprovision?: boolean;
  backdate: number;
}

/** `scanhub simulate`: gateways that publish realistic scans over mqtts to a deployment. */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .addHelpText('after', examples(['scanhub simulate --gateways 2 --rate 5 --duration 1m', 'scanhub simulate --prefix line --job-start JOB- --job-end DONE- --duration 10m']))
    .description('simulate gateways: create or reuse them, provision them, publish scans and telemetry over MQTT (QoS 1), answer their commands')
    .option('--gateways <n>', 'number of gateways, named {prefix}-1 ... {prefix}-n', positiveInteger(1000), 2)
    .option('--rate <r>', 'events per second, per gateway', rate, 1)
    .addOption(new Option('--duration <d>', 'how long to publish: 30s, 5m, 1h').argParser(duration).default(30_000, '30s'))
    .option('--prefix <name>', 'gateway name prefix', 'sim')
    .option('--usecase <usecase>', 'use case of gateways it creates', 'simulation')
    .option('--station <station>', 'station of gateways it creates (default {prefix}-station)')
    .option('--job-start <prefix>', 'start barcode prefix: mix jobs (start, items, end) into the scans')
    .option('--job-end <prefix>', 'end barcode prefix (with --job-start)')
    .option('--mqtt-endpoint <url>', 'connect here instead of the mqtt_endpoint the deployment hands out')
    .addOption(
      new Option('--backdate <duration>', "stamp each event this long before it is sent, as a device uploading what it kept while offline (at most the server's --min-created allows): 3d, 12h")
        .argParser(backdate)
        .default(0, 'none'),
    )
    .option('--reprovision', 're-provision (same gateway id, new certificate) gateways whose certificate was revoked or replaced, or that were provisioned elsewhere')
    .action(async (options: SimulateOptions, command: Command) => {
      if (Boolean(options.jobStart) !== Boolean(options.jobEnd)) {
        throw new CliError('--job-start and --job-end go together', Exit.USAGE);
      }
      const session = await connect(command);
      const { io } = session;
      const gateways = await setUpGateways(session, {
        prefix: options.prefix,
        count: options.gateways,
        usecase: options.usecase,
        station: options.station ?? `${options.prefix}-station`,
        reprovision: options.reprovision,
        say: (message) => success(io, message),
      });
      const watching = stderrIsTerminal();
      io.err(`Publishing ~${options.rate} event(s)/s from each of ${gateways.length} gateway(s) for ${options.duration / 1000}s ...`);
      const summary = await runSimulation({
        gateways,
        rate: options.rate,
        durationMs: options.duration,
        jobs: options.jobStart && options.jobEnd ? { start: options.jobStart, end: options.jobEnd } : undefined,
        mqttEndpoint: options.mqttEndpoint,
        backdateMs: options.backdate,
        onConnection: (message) => io.err(`${watching ? '\n' : ''}${message}`),
        // One line per command on stderr (stdout keeps the summary): the gateway, the command, the answer.
        onCommand: (c) =>
          io.err(`${watching ? '\n' : ''}gateway ${c.gateway}: command ${c.name}${c.device_id ? ` for ${c.device_id}` : ''} ${JSON.stringify(c.parameters)} (${c.command_id}): answered ${c.status}`),
        // Progress only for a person watching: not into logs or pipes.
        onProgress: watching
          ? (p) => process.stderr.write(`\r${Math.round(p.elapsedMs / 1000)}s: ${p.sent} sent, ${p.acknowledged} acknowledged   `)
          : undefined,
      });
      if (watching) process.stderr.write('\n');
      printSummary(session.io, summary);
      if (summary.messages_acknowledged !== summary.messages_sent) {
        throw new CliError(`${summary.messages_sent - summary.messages_acknowledged} of ${summary.messages_sent} messages were not acknowledged`);
      }
      success(io, `All ${summary.messages_sent} messages acknowledged: the events are stored.`);
    });
}

function printSummary(io: Io, summary: SimulationSummary): void {
  printObject(io, summary, [
    { header: 'gateways', value: (s) => s.gateways.map((g) => g.name).join(',') },
    { header: 'duration_ms', value: (s) => s.duration_ms },
    { header: 'messages_sent', value: (s) => s.messages_sent },
    { header: 'messages_acknowledged', value: (s) => s.messages_acknowledged },
    { header: 'messages_failed', value: (s) => s.messages_failed },
    { header: 'events_sent', value: (s) => s.events_sent },
    { header: 'scans', value: (s) => s.scans },
    { header: 'telemetry', value: (s) => s.telemetry },
    { header: 'gateway_reports', value: (s) => s.gateway_reports },
    { header: 'jobs', value: (s) => s.jobs },
    { header: 'acknowledged_per_second', value: (s) => s.acknowledged_per_second },
  ]);
}
