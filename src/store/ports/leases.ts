/**
 * Leases on background work that one instance does at a time and another takes over when it dies
 * (docs/webhooks.md "Several instances"): a named row with a holder and an expiry, renewed by its
 * holder. SQLite: one process per data directory holds every lease.
 */
export interface LeaseRepository {
  /** Takes the lease for `ttlMs` when it is free, expired or held by `holder` (renewing it); whether `holder` holds it now. */
  claim(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up when `holder` holds it. */
  release(name: string, holder: string): Promise<void>;
}
