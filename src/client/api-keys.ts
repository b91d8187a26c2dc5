import { collectAll, seg, type ApiClient, type CustomerApi } from './api.js';

/** An API key as the API lists it (docs/api-keys.md); `key` only in the answer that created it. */
export interface ApiKey {
  id: string;
  name: string;
  key?: string;
  permissions: string[];
  created: number;
  expires_at: number | null;
  last_used: number | null;
}

/** The body that creates a key: without permissions it gets all of its creator's; without expires_at it never expires. */
export interface NewApiKey {
  name: string;
  permissions?: string[];
  expires_at?: number;
}

const apiKeysPath = (api: CustomerApi) => `${api.base}/api-keys`;

/** Creates a key; the answer is the only one that holds it. */
export function createApiKey(api: CustomerApi, key: NewApiKey): Promise<ApiKey & { key: string }> {
  return api.client.post<ApiKey & { key: string }>(apiKeysPath(api), key);
}

/** The customer's keys that are not revoked. */
export function listApiKeys(api: CustomerApi): Promise<ApiKey[]> {
  return collectAll<ApiKey>(api.client, apiKeysPath(api));
}

/** Revokes a key: it is refused from the next request on. */
export function revokeApiKey(api: CustomerApi, keyId: string): Promise<void> {
  return api.client.delete(`${apiKeysPath(api)}/${seg(keyId)}`);
}

/** The API key the client sends, with its customer (a key names none itself). */
export function currentApiKey(client: ApiClient): Promise<ApiKey & { customer_id: string }> {
  return client.get<ApiKey & { customer_id: string }>('/api-keys/current');
}
