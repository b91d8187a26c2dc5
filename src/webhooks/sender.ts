import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { bodyPieces, type WebhookBody } from '../domain/webhook-signature.js';
import { RESPONSE_BODY_CAP, checkWebhookUrl, refusedAddress, type CheckedUrl } from '../domain/webhooks.js';

/** How one POST to a receiver ended: its status, or why there was none, and how long it took. */
export interface SendResult {
  status: number | null;
  latencyMs: number;
  /** Why there is no status (refused address, timeout, connection error). */
  error?: string;
}

/** URLs checked kept at most (the check depends only on the URL: its addresses are checked at each connection). */
const CHECKED_KEPT = 1_000;

/**
 * A URL checked, and if it may be sent to, the options of a request to it (made once per URL, not
 * parsed from it at each request) and its Host header.
 */
type Target = { ok: true; https: boolean; options: RequestOptions; host: string } | { ok: false; reason: string };

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup that refuses the addresses webhooks may not reach (docs/webhooks.md "URLs"),
 * checked on the answer the connection then uses, so a name that resolved to a public address at
 * creation cannot be pointed at an internal one later (DNS rebinding).
 */
export function guardedLookup(allowLoopback: boolean) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const refused = refusedAddress(address, allowLoopback);
        if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused}`), { code: 'EADDRREFUSED' }), []);
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** POSTs webhook messages: keep-alive connections, no redirects followed, a deadline, a capped answer. */
export class WebhookSender {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;
  private readonly lookup: ReturnType<typeof guardedLookup>;
  private readonly checked = new Map<string, Target>();
  /** The requests in flight per signal given, to stop when it aborts: one listener per signal, not one per request. */
  private readonly stoppers = new WeakMap<AbortSignal, Set<() => void>>();

  constructor(
    private readonly options: { allowLoopback: boolean; timeoutMs: number },
  ) {
    this.lookup = guardedLookup(options.allowLoopback);
    this.http = new HttpAgent({ keepAlive: true, lookup: this.lookup } as ConstructorParameters<typeof HttpAgent>[0]);
    this.https = new HttpsAgent({ keepAlive: true, lookup: this.lookup } as ConstructorParameters<typeof HttpsAgent>[0]);
  }

  /** POSTs the body (pieces written one after the other); a 3xx is an answer like any other (not followed). Never throws. */
  send(url: string, headers: Record<string, string>, body: WebhookBody, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const target = this.target(url);
    if (!target.ok) return Promise.resolve({ status: null, latencyMs: 0, error: target.reason });
    const stoppers = signal && this.stoppersOf(signal);
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const settle = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        stoppers?.delete(abort);
        resolve(result);
      };
      const pieces = bodyPieces(body);
      let length = 0;
      for (const piece of pieces) length += Buffer.byteLength(piece);
      // The headers as a list: Node writes them as they are (an object's are checked and copied one
      // by one), so the Host header is ours to add; nothing here needs the check: the values are
      // ours (ids, times, signatures) and the host is the parsed URL's.
      const list: string[] = [];
      for (const name in headers) list.push(name, headers[name]!);
      list.push('content-type', 'application/json', 'content-length', String(length), 'user-agent', 'scanhub-webhooks', 'Host', target.host);
      const request = (target.https ? httpsRequest : httpRequest)({ ...target.options, headers: list as unknown as RequestOptions['headers'] });
      const deadline = setTimeout(() => {
        request.destroy();
        settle({ status: null, latencyMs: elapsed(), error: `no answer within ${this.options.timeoutMs / 1000} s` });
      }, this.options.timeoutMs);
      const abort = () => {
        request.destroy();
        settle({ status: null, latencyMs: elapsed(), error: 'stopped' });
      };
      stoppers?.add(abort);
      request.on('error', (error) => settle({ status: null, latencyMs: elapsed(), error: error.message }));
      request.on('response', (response: IncomingMessage) => readCapped(response, () => settle({ status: response.statusCode ?? null, latencyMs: elapsed() })));
      // Written before the connection is there, the pieces go out together (one writev).
      for (const piece of pieces) request.write(piece);
      request.end();
    });
  }

  /** The URL's form checked, and the options of a request to it, once per URL. */
  private target(url: string): Target {
    let target = this.checked.get(url);
    if (!target) {
      if (this.checked.size >= CHECKED_KEPT) this.checked.clear();
      target = this.targetOf(checkWebhookUrl(url, this.options.allowLoopback));
      this.checked.set(url, target);
    }
    return target;
  }

  private targetOf(checked: CheckedUrl): Target {
    if (!checked.ok) return checked;
    const https = checked.url.protocol === 'https:';
    const { url, host } = checked;
    // Only what a request reads: Node's own conversion of a URL adds its href, hash, search and
    // pathname, which each request then copies twice.
    const options: RequestOptions = {
      protocol: url.protocol,
      hostname: host,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname + url.search,
      method: 'POST',
      agent: https ? this.https : this.http,
      lookup: this.lookup as RequestOptions['lookup'],
      // What Node would work out from the Host header at each request: the name for TLS SNI, none for an address.
      servername: isIP(host) === 0 ? host : '',
    } as RequestOptions;
    // URL's host: the name (an IPv6 address in brackets) and the port unless the scheme's own, as Node would write it.
    return { ok: true, https, options, host: url.host };
  }

  /** The requests in flight with this signal, each stopped when it aborts. */
  private stoppersOf(signal: AbortSignal): Set<() => void> {
    let stoppers = this.stoppers.get(signal);
    if (!stoppers) {
      const created = new Set<() => void>();
      signal.addEventListener('abort', () => created.forEach((stop) => stop()), { once: true });
      this.stoppers.set(signal, (stoppers = created));
    }
    return stoppers;
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** Reads the answer up to RESPONSE_BODY_CAP bytes (its content is of no use to us), then calls `done`; a longer one loses its connection. */
function readCapped(response: IncomingMessage, done: () => void): void {
  let read = 0;
  response.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > RESPONSE_BODY_CAP) {
      response.destroy();
      done();
    }
  });
  response.on('end', done);
  response.on('error', done);
  response.on('close', done);
}
