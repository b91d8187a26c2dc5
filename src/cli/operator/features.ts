import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { operatorAuditEntry } from '../../domain/audit.js';
import { CliError, Exit, printObject, success } from '../io.js';
import { withOperatorStore } from './store.js';
import { examples } from '../help.js';

/** `--properties`: a JSON object, or null to clear them. */
function additionalProperties(text: string): Record<string, unknown> | null {
  let properties: Record<string, unknown> | null;
  try {
    properties = JSON.parse(text) as Record<string, unknown> | null;
  } catch (cause) {
    throw new CliError(`--properties is not valid JSON: ${(cause as Error).message}`, Exit.USAGE);
  }
  if (properties !== null && (typeof properties !== 'object' || Array.isArray(properties))) {
    throw new CliError('--properties must be a JSON object or null', Exit.USAGE);
  }
  return properties;
}

/** `scanhub operator features set`: a feature flag of a customer. */
export function registerFeatureCommands(operator: Command): void {
  const features = operator.command('features').addHelpText('after', examples(['scanhub operator features set acme job_analysis --enable'])).description('feature flags per customer');
  features
    .command('set <customer_id> <feature>')
    .addHelpText('after', examples(['scanhub operator features set acme job_analysis --enable']))
    .description('enable or disable a feature for a customer')
    .option('--enable', 'enable the feature')
    .option('--disable', 'disable the feature')
    .option('--properties <json>', 'additional_properties, a JSON object ("null" clears them)')
    .action(async (id: string, feature: string, options: { enable?: boolean; disable?: boolean; properties?: string }, command: Command) => {
      if (Boolean(options.enable) === Boolean(options.disable)) throw new CliError('give exactly one of --enable and --disable', Exit.USAGE);
      if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(feature)) throw new CliError(`"${feature}" is not a valid feature name`, Exit.USAGE);
      const properties = options.properties === undefined ? undefined : additionalProperties(options.properties);
      await withOperatorStore(command, async (store, io) => {
        if (!(await store.customers.exists(id))) throw new CliError(`customer "${id}" does not exist`);
        const now = Date.now();
        const audit = operatorAuditEntry(randomUUID(), id, now, 'feature.set', { type: 'feature', id: feature }, {
          enabled: Boolean(options.enable),
          ...(properties !== undefined ? { additional_properties: properties } : {}),
        });
        const result = await store.features.set(id, feature, Boolean(options.enable), properties, now, audit);
        printObject(io, result, [
          { header: 'feature', value: (f) => f.feature },
          { header: 'enabled', value: (f) => f.enabled },
          { header: 'additional_properties', value: (f) => (f.additional_properties ? JSON.stringify(f.additional_properties) : '') },
        ]);
        success(io, `${options.enable ? 'Enabled' : 'Disabled'} feature "${feature}" for customer "${id}".`);
      });
    });
}
