import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../domain/time-input.js';
import { setUpGateways } from '../simulator/gateways.js';
import { runSimulation, type SimulationSummary } from '../simulator/run.js';
import { connect } from './connect.js';
import { CliError, Exit, printObject, success } from './io.js';

function positiveInteger(max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`"${value}" is not a whole number from 1 to ${max}.`);
    return n;
  };
}

function rate(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 10_000) throw new InvalidArgumentError(`"${value}" is not a rate above 0 and at most 10000 events per second.`);
  return n;
}

/** `30`, `30s`, `5m`, `1h` -> milliseconds. */
function duration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match?.[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = match ? Number(match[1]) * unit : NaN;
  if (!(ms > 0 && ms <= 24 * 3_600_000)) throw new InvalidArgumentError(`"${value}" is not a duration like 30s, 5m or 1h (at most 24h).`);
  return ms;
}

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

/** `--backdate 3d`: a duration (domain/time-input.ts forms) of at most 366 days. */
function backdate(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (ms > 366 * 86_400_000) throw new InvalidArgumentError(`"${value}" is more than 366d.`);
  return ms;
}

/** `scanhub simulate`: gateways that publish realistic scans over mqtts to a deployment. */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('simulate gateways: create or reuse them, provision them, publish scans and telemetry over MQTT (QoS 1)')
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
      io.err(`Publishing ~${options.rate} event(s)/s from each of ${gateways.length} gateway(s) for ${options.duration / 1000}s ...`);
      const summary = await runSimulation({
        gateways,
        rate: options.rate,
        durationMs: options.duration,
        jobs: options.jobStart && options.jobEnd ? { start: options.jobStart, end: options.jobEnd } : undefined,
        mqttEndpoint: options.mqttEndpoint,
        backdateMs: options.backdate,
        onConnection: (message) => io.err(`${process.stderr.isTTY ? '\n' : ''}${message}`),
        // Progress only for a person watching: not into logs or pipes.
        onProgress: process.stderr.isTTY
          ? (p) => process.stderr.write(`\r${Math.round(p.elapsedMs / 1000)}s: ${p.sent} sent, ${p.acknowledged} acknowledged   `)
          : undefined,
      });
      if (process.stderr.isTTY) process.stderr.write('\n');
      printSummary(session.io, summary);
      if (summary.messages_acknowledged !== summary.messages_sent) {
        throw new CliError(`${summary.messages_sent - summary.messages_acknowledged} of ${summary.messages_sent} messages were not acknowledged`);
      }
      success(io, `All ${summary.messages_sent} messages acknowledged: the events are stored.`);
    });
}

function printSummary(io: Parameters<typeof printObject>[0], summary: SimulationSummary): void {
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
