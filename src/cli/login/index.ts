import type { Command } from 'commander';
import { registerLoginCommand } from './login.js';
import { registerLogoutCommand } from './logout.js';
import { registerWhoamiCommand } from './whoami.js';

/** `scanhub login`, `logout`, `whoami`: the saved profile and who it is. */
export function registerLoginCommands(program: Command): void {
  registerLoginCommand(program);
  registerLogoutCommand(program);
  registerWhoamiCommand(program);
}
