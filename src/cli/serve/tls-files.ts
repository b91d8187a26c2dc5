import { TlsPairError, readTlsPair, type TlsPair } from '../../pki/tls-pair.js';
import type { RunningServer } from '../../serve/start.js';
import { CliError, Exit } from '../io.js';

/** `--tls-cert/--tls-key` read and checked, or undefined without them; a bad file is a usage error (exit 2) before listening. */
export function tlsFiles(certFile: string | undefined, keyFile: string | undefined): TlsPair | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (!certFile || !keyFile) throw new CliError('--tls-cert and --tls-key go together: give both files (or --https for a certificate of the deployment CA)', Exit.USAGE);
  try {
    return readTlsPair(certFile, keyFile);
  } catch (error) {
    if (error instanceof TlsPairError) throw new CliError(`--tls-${error.file}: ${error.message}`, Exit.USAGE);
    throw error;
  }
}

/** On SIGHUP: the certificate files read again and served to new connections; bad files keep the old pair. */
export function reloadTlsOnHangup(server: Pick<RunningServer, 'reloadTls' | 'app'>, certFile: string, keyFile: string): void {
  process.on('SIGHUP', () => {
    let pair: TlsPair;
    try {
      pair = tlsFiles(certFile, keyFile)!;
      server.reloadTls(pair);
    } catch (error) {
      const reason = (error as Error).message;
      server.app.log.error({ certFile, keyFile, reason }, 'TLS certificate not reloaded');
      process.stderr.write(`scanhub: TLS certificate not reloaded, still serving the previous one: ${reason}\n`);
      return;
    }
    server.app.log.info({ certFile, keyFile }, 'TLS certificate reloaded');
    process.stderr.write(`Reloaded the TLS certificate from ${certFile}.\n`);
  });
}
