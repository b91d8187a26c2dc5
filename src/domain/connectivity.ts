/** Where a gateway stands between creation and regular traffic (docs/gateways.md "connectivity_status"). */
export type ConnectivityStatus = 'NOT_REGISTERED' | 'REGISTERING' | 'ACTIVE' | 'INACTIVE';

/** A gateway with a message at most this old is ACTIVE. */
export const ACTIVE_WINDOW_MS = 2 * 60 * 60 * 1000;

/**
 * How fresh ingest keeps a gateway's stored last message: it writes it again only once the
 * gateway's newest message is this much newer than the stored one (the status needs hours, not
 * seconds). The first message after none is always written (REGISTERING -> ACTIVE at once).
 * 8 s, with the alert evaluator's 2 s round, keeps a gateway_offline alert within 10 s of its
 * `after_seconds` of real silence (docs/alerts.md).
 */
export const LAST_MESSAGE_RESOLUTION_MS = 8_000;

/** Whether a message at `at` must be written as the last message over the stored one. */
export function lastMessageDue(stored: number | null, at: number): boolean {
  return stored === null || at - stored >= LAST_MESSAGE_RESOLUTION_MS;
}

export interface ConnectivityFacts {
  /** When prepare-provisioning ran, or null. */
  provisioning_prepared: number | null;
  /** When the last message from the gateway reached the back end (to LAST_MESSAGE_RESOLUTION_MS), or null. */
  last_message: number | null;
  /** When revoke-certificate left the gateway without a usable certificate, or null. */
  certificate_revoked?: number | null;
  /** When reprovision ran, until the device redeemed the new token, or null. */
  reprovisioned?: number | null;
}

/**
 * The status at `now`: NOT_REGISTERED after creation, REGISTERING once prepare-provisioning ran and
 * until the first message, ACTIVE while the last message is at most two hours old, INACTIVE after
 * that. A message time ahead of `now` (clock skew) counts as ACTIVE. A gateway whose certificates
 * were revoked is NOT_REGISTERED; a re-provisioned one REGISTERING until its first message with the
 * new certificate (redeeming the token clears its last message).
 */
export function connectivityStatus(gateway: ConnectivityFacts, now: number): ConnectivityStatus {
  if (gateway.certificate_revoked != null) return 'NOT_REGISTERED';
  if (gateway.reprovisioned != null) return 'REGISTERING';
  if (gateway.last_message !== null) {
    return now - gateway.last_message <= ACTIVE_WINDOW_MS ? 'ACTIVE' : 'INACTIVE';
  }
  return gateway.provisioning_prepared !== null ? 'REGISTERING' : 'NOT_REGISTERED';
}
