import qrcode from 'qrcode-terminal';
import type { Preparation } from '../../client/provisioning.js';
import { provisioningCode } from '../../domain/provisioning-code.js';
import { printObject, success } from '../io.js';
import type { Session } from '../session.js';

/** The provisioning code as a QR code (small mode: two rows per line), for the device's camera. */
function renderQr(text: string): Promise<string> {
  return new Promise((resolve) => qrcode.generate(text, { small: true }, resolve));
}

/** Prints a preparation: the registration URL and token (--json: the API's object), the provisioning code as a QR code on a terminal or with --qr. */
export async function showPreparation(session: Session, preparation: Preparation, qr: boolean | undefined, done: (registrationUrl: string) => string): Promise<void> {
  const { io } = session;
  if (io.json) return io.out(JSON.stringify(preparation, null, 2));
  // The server knows its public URL; an older server without registration_url is reached at ours.
  const registrationUrl = preparation.registration_url ?? session.client.baseUrl + preparation.registration_path;
  printObject(io, { registrationUrl, token: preparation.token }, [
    { header: 'registration_url', value: (p) => p.registrationUrl },
    { header: 'token', value: (p) => p.token },
  ]);
  if (io.tty || qr) io.out(await renderQr(provisioningCode(registrationUrl, preparation.token)));
  success(io, done(registrationUrl));
}
