import type { Gateway } from '../../../src/client/gateways';

/** A gateway with the text the search looks in, lower-cased once per load rather than per keystroke. */
export interface SearchableGateway {
  gateway: Gateway;
  text: string;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** The board's order: by name, numbers in names counted as numbers (`Dock 2` before `Dock 10`). */
export function searchable(gateways: readonly Gateway[]): SearchableGateway[] {
  return [...gateways]
    .sort((a, b) => collator.compare(a.name, b.name))
    .map((gateway) => ({ gateway, text: `${gateway.name}\n${gateway.station}\n${gateway.usecase}`.toLowerCase() }));
}

/** The gateways whose name, station or use case holds every word of the query, in any case. */
export function search(gateways: readonly SearchableGateway[], query: string): SearchableGateway[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return gateways as SearchableGateway[];
  return gateways.filter(({ text }) => words.every((word) => text.includes(word)));
}
