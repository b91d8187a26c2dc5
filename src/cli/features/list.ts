import type { Command } from 'commander';
import { listFeatures } from '../../client/features.js';
import { printList } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

/** `scanhub features list`. */
export function registerListCommand(features: Command): void {
  features
    .command('list')
    .addHelpText('after', examples(['scanhub features list']))
    .description('list the feature flags')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listFeatures(session), [
        { header: 'FEATURE', value: (f) => f.feature },
        { header: 'ENABLED', value: (f) => (f.enabled ? 'yes' : 'no') },
        { header: 'PROPERTIES', value: (f) => (f.additional_properties ? JSON.stringify(f.additional_properties) : '') },
      ]);
    });
}
