import type { ApiClient, CustomerApi } from './api.js';
import type { User } from './users.js';

/** What logging in and accepting an invitation return: an IdToken for the user's customer. */
export interface LoginResponse {
  id_token: string;
  token_type: 'Bearer';
  expires_in: number;
  customer_id: string;
}

/** The calling user (`GET /{customer_id}/me`); with an API key, its creator with the key's permissions. */
export type Me = User & { permissions: string[] };

/** Logs in with e-mail and password. */
export function logIn(client: ApiClient, email: string, password: string): Promise<LoginResponse> {
  return client.post<LoginResponse>('/auth/login', { email, password });
}

/** Accepts an invitation: sets the password and logs in. */
export function acceptInvitation(client: ApiClient, invitationToken: string, password: string): Promise<LoginResponse> {
  return client.post<LoginResponse>('/auth/accept-invitation', { invitation_token: invitationToken, password });
}

/** The user the credentials of `api` belong to. */
export function whoAmI(api: CustomerApi): Promise<Me> {
  return api.client.get<Me>(`${api.base}/me`);
}
