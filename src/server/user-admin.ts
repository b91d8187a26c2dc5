import { permissionsBeyond } from '../domain/permissions.js';
import type { Principal } from './access.js';
import { forbidden } from './errors.js';

/**
 * Who may administer whom (docs/users.md "Who may do what"): a caller can never hand out more
 * than it holds, and an API key never administers an administrator. The route guard has checked
 * `user.write` already; these check the roles involved.
 */

const isApiKey = (principal: Principal) => principal.actor.type === 'api_key';

const listed = (noun: string, values: readonly string[], quote = false) => {
  const shown = values.map((value) => (quote ? `"${value}"` : value)).join(', ');
  return `${noun}${values.length === 1 ? '' : 's'} ${shown}`;
};

/**
 * Refuses (403) `action` (creating, inviting, changing the roles of a user) when the caller lacks
 * a permission of `roles` (every role the user has or would have), or when it is an API key and
 * one of them is ADMIN_ROLE. The details name what is missing.
 */
export function checkHandOut(principal: Principal, roles: readonly string[], action: string): void {
  const key = isApiKey(principal);
  if (key && roles.includes('ADMIN_ROLE')) {
    throw forbidden(`An API key cannot ${action}: administrators (ADMIN_ROLE) are administered only by an administrator signed in with an IdToken.`);
  }
  const missing = permissionsBeyond(principal.permissions, roles);
  if (missing.length === 0) return;
  const roleList = listed('the role', [...new Set(roles)]);
  throw forbidden(
    `${key ? 'This API key' : 'You'} cannot ${action}: it needs every permission of ${roleList}, and ${key ? 'the key lacks' : 'you lack'} ${listed('the permission', missing, true)}.`,
  );
}

/** Refuses (403) `action` unless the caller is an ADMIN_ROLE user signed in with an IdToken (not an API key). */
export function checkSignedInAdmin(principal: Principal, action: string): void {
  if (isApiKey(principal)) throw forbidden(`An API key cannot ${action}: only an administrator signed in with an IdToken can.`);
  if (!principal.user.roles.includes('ADMIN_ROLE')) throw forbidden(`Only an administrator (ADMIN_ROLE) can ${action}; ask one.`);
}
