/**
 * The provisioning code: the text of the QR code that the CLI prints and the console shows, and
 * what a device reads to register (DESIGN.md "CLI conventions"). One JSON object, keys in this
 * order, so that both show the same code for the same token.
 */
export function provisioningCode(registrationUrl: string, token: string): string {
  return JSON.stringify({ registration_url: registrationUrl, token });
}
