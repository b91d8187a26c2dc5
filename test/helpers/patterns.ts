/** A version 4 UUID as crypto.randomUUID makes them: the ids of users, gateways, events, signing keys. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** An API key as `POST /{customer_id}/api-keys` returns it: `shk_` and 32 random bytes in base64url. */
export const API_KEY = /^shk_[A-Za-z0-9_-]{43}$/;
