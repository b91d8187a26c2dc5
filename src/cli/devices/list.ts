import { InvalidArgumentError, type Command } from 'commander';
import { listDevices, type DeviceStatus } from '../../client/devices.js';
import { DEVICE_STATUSES } from '../../domain/devices.js';
import { gatewayIdOf, gatewayNames } from '../gateway-refs.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { deviceColumns } from './output.js';

interface ListOptions {
  gateway?: string;
  status?: DeviceStatus;
  batteryBelow?: number;
}

/** commander parser for `--status`: one of DEVICE_STATUSES, in any case. */
function statusArgument(text: string): DeviceStatus {
  const status = text.toUpperCase() as DeviceStatus;
  if (!DEVICE_STATUSES.includes(status)) throw new InvalidArgumentError(`"${text}" is not a status: use ${DEVICE_STATUSES.join(', ')}.`);
  return status;
}

/** commander parser for `--battery-below`: a battery level 0..100. */
function batteryArgument(text: string): number {
  const level = Number(text);
  if (text.trim() === '' || !Number.isFinite(level) || level < 0 || level > 100) throw new InvalidArgumentError(`"${text}" is not a battery level from 0 to 100.`);
  return level;
}

/** `scanhub devices list`: every scanner that matches, by device id. */
export function registerListCommand(devices: Command): void {
  devices
    .command('list')
    .description('list the scanners, by device id')
    .option('--gateway <gateway>', 'only scanners whose newest event this gateway relayed (id or name)')
    .option('--status <status>', `only scanners of this status now: ${DEVICE_STATUSES.join(', ')}`, statusArgument)
    .option('--battery-below <level>', 'only scanners whose last reported battery is below LEVEL (0..100)', batteryArgument)
    .addHelpText('after', '\nExamples:\n  scanhub devices list --status LOST\n  scanhub devices list --gateway dock-1 --battery-below 20 --json')
    .action(async (options: ListOptions, command: Command) => {
      const session = await connect(command);
      const gateway = options.gateway === undefined ? undefined : await gatewayIdOf(session, options.gateway);
      const devices = await listDevices(session, { gateway_id: gateway, status: options.status, battery_below: options.batteryBelow });
      const names = session.io.json || devices.length === 0 ? new Map<string, string>() : await gatewayNames(session);
      printList(session.io, devices, deviceColumns(session.io, names));
    });
}
