import { Command, Option } from 'commander';
import { LOOPBACK_RANGES } from '../../domain/addresses.js';
import { DEFAULT_CREATED_WINDOW } from '../../domain/payload-limits.js';
import { RATE_LIMITS } from '../../domain/rate-limits.js';
import { MAX_DELETED_PER_SECOND } from '../../domain/retention.js';
import { DEFAULT_GATEWAY_KEY_TYPE, KEY_TYPES } from '../../pki/keys.js';
import { addDeploymentOptions } from '../deployment.js';
import { createdAhead, earliestCreated, eventsPerSecond, gatewayKeyType, perMinute, port, publicUrl, trustedProxies, type ServeFlags } from './flags.js';
import { LOG_FORMATS } from './log.js';
import { runServe } from './run.js';
import { examples } from '../help.js';

/** `scanhub serve`: the whole service in this process. */
export function registerServeCommand(program: Command): void {
  const serve = program.command('serve');
  addDeploymentOptions(serve)
    .description('run the scanhub service: HTTP API, MQTT broker, SQLite store (or PostgreSQL with --database)')
    .addHelpText('after', examples(['scanhub serve', 'scanhub serve --data-dir /var/lib/scanhub --host 0.0.0.0 --public-url https://scanhub.example']))
    .addOption(new Option('--data-dir <dir>', 'data directory').env('SCANHUB_DATA_DIR').default('./scanhub-data'))
    .addOption(new Option('--host <host>', 'address to listen on').env('SCANHUB_HOST').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'HTTP port').env('SCANHUB_PORT').default(8080).argParser(port))
    .addOption(new Option('--mqtt-port <port>', 'MQTT over TLS port').env('SCANHUB_MQTT_PORT').default(8883).argParser(port))
    .addOption(new Option('--tls-cert <file>', 'serve the API over HTTPS with this certificate (PEM, chain allowed; reread on SIGHUP)').env('SCANHUB_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'the private key (PEM) of --tls-cert').env('SCANHUB_TLS_KEY'))
    .addOption(new Option('--https', 'serve the API over HTTPS with a certificate of the deployment CA (see `scanhub operator ca`); env SCANHUB_HTTPS=1'))
    .addOption(new Option('--public-url <url>', 'base URL for links (default http(s)://<host>:<port>; the machine\'s host name for <host> with --host 0.0.0.0 or ::)').env('SCANHUB_PUBLIC_URL').argParser(publicUrl))
    .addOption(
      new Option('--mqtt-proxy-trust <cidrs>', 'balancers (addresses or CIDR ranges, comma-separated) whose PROXY protocol header is believed; other peers are closed')
        .env('SCANHUB_MQTT_PROXY_TRUST')
        .default(LOOPBACK_RANGES, 'loopback')
        .argParser(trustedProxies),
    )
    .addOption(new Option('--trust-proxy <cidrs>', 'balancers (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client').env('SCANHUB_TRUST_PROXY').argParser(trustedProxies))
    .addOption(
      new Option('--auth-rate-limit <n>', 'POST /auth/* requests a minute from one client address (log-in, accept-invitation)')
        .env('SCANHUB_AUTH_RATE_LIMIT')
        .default(RATE_LIMITS.auth)
        .argParser(perMinute),
    )
    .addOption(
      new Option('--provisioning-rate-limit <n>', 'POST /provisioning requests a minute from one client address (devices redeeming their token)')
        .env('SCANHUB_PROVISIONING_RATE_LIMIT')
        .default(RATE_LIMITS.provisioning)
        .argParser(perMinute),
    )
    .addOption(new Option('--mqtt-public-port <port>', 'port put into mqtt_endpoint (default: the MQTT port as bound; set it to the balancer\'s)').env('SCANHUB_MQTT_PUBLIC_PORT').argParser(port))
    .addOption(new Option('--mqtt-proxy-protocol', 'expect HAProxy\'s PROXY protocol v2 header on every MQTT connection (refusing those without); env SCANHUB_MQTT_PROXY_PROTOCOL=1'))
    .addOption(new Option('--webhook-allow-loopback', 'let webhook URLs name loopback addresses (a receiver on this machine); link-local and unspecified stay refused; env SCANHUB_WEBHOOK_ALLOW_LOOPBACK=1'))
    .addOption(new Option('--mqtt-public-host <host>', 'host put into mqtt_endpoint (default: --host, or the machine\'s host name)').env('SCANHUB_MQTT_PUBLIC_HOST'))
    .addOption(
      new Option('--log-format <format>', 'log lines for a person (pretty) or JSON lines (json); default pretty on a terminal, json otherwise')
        .env('SCANHUB_LOG_FORMAT')
        .choices(LOG_FORMATS),
    )
    .addOption(
      new Option('--gateway-key-type <type>', `key of new gateway certificates: ${KEY_TYPES.join(' or ')} (for devices that need RSA)`)
        .env('SCANHUB_GATEWAY_KEY_TYPE')
        .default(DEFAULT_GATEWAY_KEY_TYPE)
        .argParser(gatewayKeyType),
    )
    .addOption(
      new Option('--retention-rate <n>', 'events a deletion of old events (retention) deletes per second at most')
        .env('SCANHUB_RETENTION_RATE')
        .default(MAX_DELETED_PER_SECOND)
        .argParser(eventsPerSecond),
    )
    .addOption(
      new Option('--min-created <time>', 'earliest created an MQTT event may have (ISO 8601 or epoch ms)')
        .env('SCANHUB_MIN_CREATED')
        .default(DEFAULT_CREATED_WINDOW.earliest, '2000-01-01T00:00:00Z')
        .argParser(earliestCreated),
    )
    .addOption(
      new Option('--max-created-ahead <duration>', "how far past its receipt an MQTT event's created may be (at most 366d)")
        .env('SCANHUB_MAX_CREATED_AHEAD')
        .default(DEFAULT_CREATED_WINDOW.aheadMs, '1d')
        .argParser(createdAhead),
    )
    .action((flags: ServeFlags) => runServe(flags));
}
