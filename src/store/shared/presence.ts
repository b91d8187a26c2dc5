/** The connections of several instances as one map: the newest connection of a gateway named twice (an instance that died and has not expired yet). */
export function mergeConnections(maps: Iterable<ReadonlyMap<string, number>>): Map<string, number> {
  const merged = new Map<string, number>();
  for (const map of maps) {
    for (const [id, since] of map) if (since > (merged.get(id) ?? -Infinity)) merged.set(id, since);
  }
  return merged;
}
