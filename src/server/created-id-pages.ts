import { decodePageToken, encodePageToken, isCreatedIdKey, type CreatedIdKey } from '../domain/page-token.js';
import { badRequest } from './errors.js';

/** A customer's list that pages in (created, id) order: its path segment (also the token's kind) and what it lists. */
export interface CreatedIdList {
  /** `users` for `/{customer_id}/users`. */
  segment: string;
  /** The item's name in the refusal of a foreign token: "user" -> "not a token of this user list". */
  noun: string;
}

/**
 * One page of the list after the position `next_token` names (refused with a 400 when it is not a
 * token of this list and customer), read as `limit + 1` rows so that `next` links a further page
 * only when there is one.
 */
export async function createdIdPage<T extends CreatedIdKey>(
  list: CreatedIdList,
  customerId: string,
  query: { next_token?: string; limit: number },
  read: (after: CreatedIdKey | null, limit: number) => Promise<T[]>,
): Promise<{ page: T[]; next: string | undefined }> {
  const { next_token, limit } = query;
  let after: CreatedIdKey | null = null;
  if (next_token !== undefined) {
    const token = decodePageToken(next_token, list.segment, customerId, isCreatedIdKey);
    if (!token) throw badRequest(`Query parameter "next_token" is not a token of this ${list.noun} list.`);
    after = token.after;
  }
  const rows = await read(after, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next =
    rows.length > limit && last
      ? `/${encodeURIComponent(customerId)}/${list.segment}?next_token=${encodePageToken({
          kind: list.segment,
          customer: customerId,
          after: { created: last.created, id: last.id },
        })}&limit=${limit}`
      : undefined;
  return { page, next };
}
