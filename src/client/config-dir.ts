import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the CLI and the simulator keep their files: `$XDG_CONFIG_HOME/scanhub`, else `~/.config/scanhub`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'scanhub');
}
