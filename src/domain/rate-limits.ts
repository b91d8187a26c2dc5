/** Requests one client address may make per minute, per group of routes (`serve --auth-rate-limit`, `--provisioning-rate-limit`). */
export interface RateLimits {
  /** `POST /auth/*` (log-in, accept-invitation) together. */
  auth: number;
  /** `POST /provisioning` (devices trading a token for their certificate). */
  provisioning: number;
}

/**
 * The defaults: far above what a person or a device does, far below what guessing needs; counted
 * per instance, so the lockout (lockout.ts) is the limit instances share. Provisioning tokens are
 * 256 random bits: that limit guards the CPU, and lets a rollout behind one NAT address redeem 10
 * devices a second.
 */
export const RATE_LIMITS: RateLimits = { auth: 30, provisioning: 600 };

/**
 * What one authenticated caller may hold at once (docs/security.md "Limits on what one caller may
 * hold"): live event streams per user on one instance (a stream is a connection held open), and
 * export tasks in flight per customer across the deployment (each is a file written by a worker).
 */
export const CONCURRENCY_LIMITS = { liveStreamsPerUser: 10, exportsInFlightPerCustomer: 4 } as const;

/** What a 429 of those caps tells a client to wait, in seconds. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 5;
