import type { CustomerApi } from '../client/api.js';
import { listGateways } from '../client/gateways.js';
import { CliError } from './io.js';

/** Ids of gateways (also their thing names) and of job configurations are UUIDs; anything else a user types for a gateway is taken as its name. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Gateway ids for references that are ids or gateway names (names are unique per customer).
 * The gateways are listed only when a name is given; an unknown name is an error that says
 * where to look, rather than a query that silently matches nothing.
 */
export async function gatewayIds(api: CustomerApi, refs: string[]): Promise<string[]> {
  if (refs.every((ref) => UUID.test(ref))) return refs;
  const gateways = await listGateways(api);
  return refs.map((ref) => {
    if (UUID.test(ref)) return ref;
    const gateway = gateways.find((g) => g.name === ref);
    if (!gateway) throw new CliError(`no gateway is named "${ref}": see \`scanhub gateways list\``);
    return gateway.id;
  });
}

/** The id of one gateway named by id or by name. */
export async function gatewayIdOf(api: CustomerApi, ref: string): Promise<string> {
  return (await gatewayIds(api, [ref]))[0]!;
}
