import type { Command } from 'commander';
import { connect } from './connect.js';
import { printList } from './io.js';

interface Feature {
  feature: string;
  enabled: boolean;
  additional_properties?: Record<string, unknown>;
}

/** `scanhub features list`. */
export function registerFeatureCommands(program: Command): void {
  const features = program.command('features').description('feature flags of the customer');
  features
    .command('list')
    .description('list the feature flags')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      const { features: list } = await session.client.get<{ features: Feature[] }>(`${session.base}/features`);
      printList(session.io, list, [
        { header: 'FEATURE', value: (f) => f.feature },
        { header: 'ENABLED', value: (f) => (f.enabled ? 'yes' : 'no') },
        { header: 'PROPERTIES', value: (f) => (f.additional_properties ? JSON.stringify(f.additional_properties) : '') },
      ]);
    });
}
