import type { Command } from 'commander';
import { getDevice } from '../../client/devices.js';
import { printObject } from '../io.js';
import { connect } from '../session.js';
import { deviceFields } from './output.js';
import { gatewayNames } from '../gateway-refs.js';

/** `scanhub devices show <device>`. */
export function registerShowCommand(devices: Command): void {
  devices
    .command('show <device>')
    .description('show one scanner by its device id (exactly as its events carry it)')
    .addHelpText('after', '\nExample:\n  scanhub devices show ring-0042')
    .action(async (deviceId: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const device = await getDevice(session, deviceId);
      const names = session.io.json || device.last_gateway_id === null ? new Map<string, string>() : await gatewayNames(session);
      printObject(session.io, device, deviceFields(session.io, names));
    });
}
