import type { Command } from 'commander';
import { createIo, success } from '../io.js';
import { profileFile, removeProfile } from '../profile.js';
import { globalsOf } from '../session.js';
import { examples } from '../help.js';

/** `scanhub logout`: forgets the saved profile. */
export function registerLogoutCommand(program: Command): void {
  program
    .command('logout')
    .addHelpText('after', examples(['scanhub logout']))
    .description('forget the saved profile')
    .action((_options: unknown, command: Command) => {
      const io = createIo(globalsOf(command));
      const file = profileFile();
      if (!removeProfile()) {
        io.err('Not logged in: there was no saved profile.');
        return;
      }
      success(io, `Logged out: removed ${file}.`);
    });
}
