import type { CommandRecord } from '../../domain/commands.js';
import type { CommandOutcome, ResponseOutcome } from '../ports/index.js';

/** A response's command as the store keys it: gateway and lower-case id. */
const keyOf = (gatewayId: string, id: string) => `${gatewayId}\n${id.toLowerCase()}`;

/**
 * The responses of a group to apply in one statement: the first for each command, ids lower-case.
 * A later one for the same command finds it final, as it would one statement after the other
 * (responseOutcomes); one multi-row UPDATE would pick among them at random.
 */
export function firstResponses(responses: readonly CommandOutcome[]): CommandOutcome[] {
  const seen = new Set<string>();
  const first: CommandOutcome[] = [];
  for (const r of responses) {
    const key = keyOf(r.gateway_id, r.id);
    if (seen.has(key)) continue;
    seen.add(key);
    first.push({ ...r, id: r.id.toLowerCase() });
  }
  return first;
}

/** The responses whose command the statement did not change: known ones are final (or expired), the rest unknown. */
export function unchanged(responses: readonly CommandOutcome[], changed: readonly CommandRecord[]): CommandOutcome[] {
  const done = new Set(changed.map((c) => keyOf(c.gateway_id, c.id)));
  return responses.filter((r) => !done.has(keyOf(r.gateway_id, r.id)));
}

/**
 * Each response's outcome, in the order given: the command it changed (its first response), or
 * 'final' (a command known, of this gateway: already final or expired, or answered before in the
 * group), or 'unknown'.
 */
export function responseOutcomes(responses: readonly CommandOutcome[], changed: readonly CommandRecord[], known: readonly { id: string; gateway_id: string }[]): ResponseOutcome[] {
  const byKey = new Map(changed.map((c) => [keyOf(c.gateway_id, c.id), c]));
  const knownKeys = new Set(known.map((c) => keyOf(c.gateway_id, c.id)));
  const taken = new Set<string>();
  return responses.map((r): ResponseOutcome => {
    const key = keyOf(r.gateway_id, r.id);
    const record = byKey.get(key);
    if (record && !taken.has(key)) {
      taken.add(key);
      return record;
    }
    return record || knownKeys.has(key) ? 'final' : 'unknown';
  });
}
