/** Identifiers a deployment accepts from its operator: customer ids and administrator e-mail addresses. */

/** A customer id: 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit (it appears in URLs and MQTT topics). */
export function isCustomerId(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value);
}

/** Why `value` is not a customer id, in the words the CLI shows. */
export function customerIdProblem(value: string): string {
  return `"${value}" is not a valid customer id: use 1-64 letters, digits, ".", "_" or "-"`;
}

/** An e-mail address as far as scanhub checks one: something@somewhere, without spaces. */
export function isEmailAddress(value: string): boolean {
  return /^[^\s@]+@[^\s@]+$/.test(value);
}
