import type { Command } from 'commander';
import { registerListCommand } from './list.js';
import { registerShowCommand } from './show.js';
import { examples } from '../help.js';

/** `scanhub devices list|show`: the scanners the customer's events name. */
export function registerDeviceCommands(program: Command): void {
  const devices = program
    .command('devices')
    .description('scanners (devices) as their events name them: battery, firmware, temperature, status')
    .addHelpText('after', examples(['scanhub devices list --status LOST'], 'Status: ACTIVE (an event in the last 2 hours), INACTIVE, LOST (no event for 7 days).'));
  registerListCommand(devices);
  registerShowCommand(devices);
}
