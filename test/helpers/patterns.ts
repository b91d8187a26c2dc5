/** A version 4 UUID as crypto.randomUUID makes them: the ids of users, gateways, events, signing keys. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** An API key as `POST /{customer_id}/api-keys` returns it: `shk_` and 32 random bytes in base64url. */
export const API_KEY = /^shk_[A-Za-z0-9_-]{43}$/;

/** A version 7 UUID (RFC 9562): the ids of commands and of their audit entries (domain/command-ids.ts). */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds since the epoch in the first 48 bits of a version 7 UUID. */
export const uuidV7Time = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
