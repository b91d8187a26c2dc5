import { isLoopback } from '../../domain/addresses.js';
import type { Bootstrap } from '../../serve/bootstrap.js';
import type { NameSource } from '../../serve/public-names.js';
import type { RunningServer } from '../../serve/start.js';

// What `serve` tells the person who started it, on stderr (its log lines go to stdout).

/** What a first start created, on stderr: the customer, its administrator, and a generated password (shown once). */
export function printBootstrap(bootstrap: Bootstrap): void {
  process.stderr.write(`Created customer "${bootstrap.customerId}" with administrator ${bootstrap.adminEmail}.\n`);
  if (bootstrap.generatedPassword) {
    process.stderr.write(`Generated administrator password (shown once, store it now): ${bootstrap.generatedPassword}\n`);
  }
}

type Derived<K extends string> = { source: NameSource } & Record<K, string>;

/**
 * Listening on every address, serve cannot know the name clients use: it says which name it
 * built links and the MQTT endpoint on, and which option to set when that name is wrong.
 */
function hostNameDefaults(publicUrl: Derived<'url'>, mqttHost: Derived<'host'>, host: string): string | undefined {
  if (publicUrl.source !== 'host name' && mqttHost.source !== 'host name') return undefined;
  const parts: string[] = [];
  if (publicUrl.source === 'host name') parts.push(`links use ${publicUrl.url}`);
  if (mqttHost.source === 'host name') parts.push(`gateways are sent to MQTT host ${mqttHost.host}`);
  const options = [publicUrl.source === 'host name' ? '--public-url' : '', mqttHost.source === 'host name' ? '--mqtt-public-host' : '']
    .filter(Boolean)
    .join(' and ');
  return `--host ${host} listens on every address, so ${parts.join(' and ')} (this machine's host name); if clients reach it by another name, set ${options}.\n`;
}

/** The line that says it serves, then what the person may need to change: the names clients use, plain HTTP on the network. */
export function printServing(server: RunningServer, host: string, https: boolean): void {
  process.stderr.write(`scanhub is serving ${server.url} (MQTT over TLS on port ${server.mqttPort}); Ctrl-C stops it.\n`);
  const hostNameNotice = hostNameDefaults(server.publicUrl, server.mqttPublicHost, host);
  if (hostNameNotice) process.stderr.write(hostNameNotice);
  if (!https && !isLoopback(host)) {
    process.stderr.write(
      `warning: the API listens on ${host} over plain HTTP, so passwords, tokens and gateway keys cross the network in clear text: serve HTTPS with --tls-cert/--tls-key or --https.\n`,
    );
  }
}
