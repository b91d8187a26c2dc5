import type { Command } from 'commander';
import { getRetention } from '../../client/retention.js';
import { printObject } from '../io.js';
import { connect } from '../session.js';
import { retentionFields } from './output.js';
import { examples } from '../help.js';

/** `scanhub retention get`. */
export function registerGetCommand(retention: Command): void {
  retention
    .command('get')
    .addHelpText('after', examples(['scanhub retention get']))
    .description('show how long events are kept and the last deletion')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await getRetention(session), retentionFields(session.io));
    });
}
