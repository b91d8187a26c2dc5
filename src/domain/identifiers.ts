/** Identifiers a deployment accepts from its operator: customer ids and administrator e-mail addresses. */

/**
 * The first path segments of routes outside a customer (the console's files, downloads, sign-in,
 * provisioning, the service's own documents): a customer of one of these names would have its API
 * shadowed by them (docs/console.md "Build and serving").
 */
export const RESERVED_CUSTOMER_IDS: readonly string[] = ['api-keys', 'assets', 'auth', 'downloads', 'healthz', 'metrics', 'openapi.json', 'provisioning'];

/** A customer id: 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit (it appears in URLs and MQTT topics), and not a reserved path. */
export function isCustomerId(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value) && !RESERVED_CUSTOMER_IDS.includes(value.toLowerCase());
}

/** Why `value` is not a customer id, in the words the CLI shows. */
export function customerIdProblem(value: string): string {
  if (RESERVED_CUSTOMER_IDS.includes(value.toLowerCase())) {
    return `"${value}" is a path of the service itself and cannot be a customer id: choose another name (reserved: ${RESERVED_CUSTOMER_IDS.join(', ')})`;
  }
  return `"${value}" is not a valid customer id: use 1-64 letters, digits, ".", "_" or "-"`;
}

/** An e-mail address as far as scanhub checks one: something@somewhere, without spaces. */
export function isEmailAddress(value: string): boolean {
  return /^[^\s@]+@[^\s@]+$/.test(value);
}
