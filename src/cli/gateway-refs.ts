import { ApiError, type CustomerApi } from '../client/api.js';
import { getGateway, listGateways, type Gateway } from '../client/gateways.js';
import { CliError } from './io.js';

/** Ids of gateways (also their thing names) and of job configurations are UUIDs; anything else a user types for a gateway is taken as its name. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const unknownName = (ref: string) => new CliError(`no gateway is named "${ref}": see \`scanhub gateways list\``);

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
    if (!gateway) throw unknownName(ref);
    return gateway.id;
  });
}

/** The id of one gateway named by id or by name. */
export async function gatewayIdOf(api: CustomerApi, ref: string): Promise<string> {
  return (await gatewayIds(api, [ref]))[0]!;
}

/** One gateway named by id or by name, whole: its messages name it as the user knows it. */
export async function gatewayOf(api: CustomerApi, ref: string): Promise<Gateway> {
  if (UUID.test(ref)) return (await getGateway(api, ref)).gateway;
  const gateway = (await listGateways(api)).find((g) => g.name === ref);
  if (!gateway) throw unknownName(ref);
  return gateway;
}

/** Gateway names by id, to show beside ids; empty when the caller may not read gateways (an API key with event.read only). */
export async function gatewayNames(api: CustomerApi): Promise<Map<string, string>> {
  try {
    return new Map((await listGateways(api)).map((gateway) => [gateway.id, gateway.name]));
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return new Map();
    throw error;
  }
}

/** A gateway as tables and messages show it: its name beside its short id (DESIGN.md "CLI conventions"), or the id alone when it has none (deleted). */
export function gatewayLabel(id: string | null, names: ReadonlyMap<string, string>): string {
  if (id === null) return '';
  const name = names.get(id);
  return name === undefined ? id : `${name} (${id.slice(0, 8)})`;
}

/** The label of a gateway at hand. */
export const labelOf = (gateway: Pick<Gateway, 'id' | 'name'>): string => gatewayLabel(gateway.id, new Map([[gateway.id, gateway.name]]));
