import type { CustomerApi } from '../../client/api.js';
import { getUser, listUsers, type User } from '../../client/users.js';
import { CliError } from '../io.js';

/**
 * The user a command names by e-mail or by id (DESIGN.md "CLI conventions"). An e-mail (it has
 * an @, which ids never do) is looked up in the list, without regard to case; an unknown one
 * says where to look.
 */
export async function userOf(api: CustomerApi, ref: string): Promise<User> {
  if (!ref.includes('@')) return getUser(api, ref);
  const wanted = ref.toLowerCase();
  const user = (await listUsers(api)).find((u) => u.email.toLowerCase() === wanted);
  if (!user) throw new CliError(`no user has the e-mail address "${ref}": see \`scanhub users list\`, or \`scanhub users create --email ${ref}\``);
  return user;
}
