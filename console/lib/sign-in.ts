import type { LoginResponse, Me } from '../../src/client/auth';
import { api } from './api';
import { startSession } from './session';

/** Starts the session of a fresh IdToken (signed in, or an invitation accepted): who it is, and what it may do. */
export async function beginSession(login: LoginResponse): Promise<void> {
  const user = await api.get<Me>(`/${encodeURIComponent(login.customer_id)}/me`, { token: login.id_token });
  startSession({ token: login.id_token, customerId: login.customer_id, user });
}
