import { collectAll, seg, type CustomerApi } from './api.js';

/** A user as the API returns it. */
export interface User {
  id: string;
  first_name?: string;
  last_name?: string;
  email: string;
  created: number;
  last_updated: number;
  language?: string;
  roles: string[];
  permissions?: string[];
}

/** The body that creates a user: one role; no password (an invitation lets the user set one). */
export interface NewUser {
  first_name: string;
  last_name: string;
  role: string;
  email: string;
}

/** A single-use invitation token with which the user sets a password. */
export interface Invitation {
  invitation_token: string;
  expires_at: number;
}

const usersPath = (api: CustomerApi) => `${api.base}/users`;
const userPath = (api: CustomerApi, userId: string) => `${usersPath(api)}/${seg(userId)}`;

/** Every user of the customer. */
export function listUsers(api: CustomerApi): Promise<User[]> {
  return collectAll<User>(api.client, usersPath(api));
}

/** One user, by id. */
export function getUser(api: CustomerApi, userId: string): Promise<User> {
  return api.client.get<User>(userPath(api, userId));
}

/** Creates a user. */
export function createUser(api: CustomerApi, user: NewUser): Promise<User> {
  return api.client.post<User>(usersPath(api), user);
}

/** What a change of a user may set (PATCH /{c}/users/{id}); the fields left out stay as they are. */
export interface UserChanges {
  roles?: string[];
  first_name?: string;
  last_name?: string;
  language?: string;
}

/** Changes a user's roles, names or language. */
export function updateUser(api: CustomerApi, userId: string, changes: UserChanges): Promise<User> {
  return api.client.patch<User>(userPath(api, userId), changes);
}

/** Creates a password-reset token (24 h, single use) for a user who has a password; redeemed like an invitation. */
export function resetPassword(api: CustomerApi, userId: string): Promise<Invitation> {
  return api.client.post<Invitation>(`${userPath(api, userId)}/password-reset`);
}

/** Deletes a user. */
export function deleteUser(api: CustomerApi, userId: string): Promise<void> {
  return api.client.delete(userPath(api, userId));
}

/** Creates an invitation (24 h, single use), voiding the user's earlier ones. */
export function inviteUser(api: CustomerApi, userId: string): Promise<Invitation> {
  return api.client.post<Invitation>(`${userPath(api, userId)}/invitation`);
}
