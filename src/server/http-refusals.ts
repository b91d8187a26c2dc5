import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { redactedUrl } from '../domain/log-redaction.js';
import { ALLOW_METHODS, EVERY_ANSWER_HEADERS } from './cors.js';
import {
  HttpError,
  badRequest,
  expectationFailed,
  headersTooLarge,
  notImplemented,
  payloadTooLarge,
  requestTimeout,
} from './errors.js';

/**
 * Requests refused before they reach a route, by Node's HTTP parser or server (docs/http.md
 * "Requests Node's parser refuses"): Node and fastify would answer them in bodies of their own
 * shape, or none; here they get `{ title, details }` and the CORS headers like every other answer.
 */

/** What Node's HTTP parser reports: llhttp's error code and reason, and the bytes it refused. */
interface ParserError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
  bytesParsed?: number;
}

/**
 * The refused request's method, quoted and cut short: the bytes up to the first space of the line
 * where parsing stopped (the packet may begin with earlier, pipelined requests).
 */
function quotedMethod(packet: Buffer | undefined, stoppedAt: number): string {
  const all = packet ?? Buffer.alloc(0);
  const bytes = all.subarray(all.lastIndexOf(0x0a, Math.max(0, stoppedAt - 1)) + 1);
  const space = bytes.indexOf(0x20);
  const method = bytes.subarray(0, space < 0 ? bytes.length : space);
  return JSON.stringify(method.subarray(0, 20).toString('latin1') + (method.length > 20 ? '...' : ''));
}

/** The error a client gets for a request that Node's parser refused, by llhttp's error code. */
export function parserRefusal(error: ParserError): HttpError {
  const reason = error.reason ?? error.message;
  const packet = error.rawPacket;
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return headersTooLarge(`The request line and headers are larger than ${maxHeaderSize / 1024} KiB: send a shorter query string or shorter headers.`);
    case 'HPE_INVALID_METHOD':
      // A TLS ClientHello starts with the handshake record type 0x16.
      if (packet?.[0] === 0x16) return badRequest('This port serves plain HTTP, not HTTPS: use an http:// URL.');
      return notImplemented(`The method ${quotedMethod(packet, error.bytesParsed ?? 0)} is not one this server implements: use one of ${ALLOW_METHODS}, in capitals.`);
    case 'HPE_INVALID_URL':
      return badRequest(`The request path is not valid (${reason}): percent-encode spaces, control characters and characters outside ASCII.`);
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
    case 'HPE_CR_EXPECTED':
    case 'HPE_LF_EXPECTED':
    case 'HPE_STRICT':
      return badRequest(`The request line is not valid HTTP/1.1 (${reason}): send "METHOD /path HTTP/1.1", percent-encode spaces and end every line with CR LF.`);
    case 'HPE_INVALID_HEADER_TOKEN':
      return badRequest(`A header is not valid HTTP (${reason}): names are tokens without spaces, values carry no control characters, lines are not folded.`);
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_CHUNK_SIZE':
      return badRequest(`The length of the request body is not clear (${reason}): send one Content-Length, or Transfer-Encoding: chunked alone.`);
    case 'HPE_PAUSED_H2_UPGRADE':
      return badRequest('This server speaks HTTP/1.1: HTTP/2 without an upgrade is not supported.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return payloadTooLarge(`The chunk extensions of the request body are too large (${reason}).`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return requestTimeout('The request did not arrive in time: send it again.');
    default:
      return badRequest(`The request is not valid HTTP/1.1 (${reason}).`);
  }
}

/** The whole HTTP message of an error, for a socket without a response object. */
function rawAnswer(error: HttpError): string {
  const body = JSON.stringify(error.body());
  const headers = {
    ...EVERY_ANSWER_HEADERS,
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? error.title}\r\n${lines.join('')}\r\n${body}`;
}

/** Writes the error onto a socket that has no response object, then closes it. */
function answerSocket(socket: Duplex, error: HttpError): void {
  // Node's own rule: never write into a response that is already under way on this socket.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawAnswer(error));
  socket.destroy();
}

/** fastify's `clientErrorHandler`: answers what Node's parser refused, and keeps serving. */
function answerParserError(this: FastifyInstance, error: ParserError, socket: Duplex): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = parserRefusal(error);
  this.log.info({ code: error.code, reason: error.reason, status: refusal.statusCode }, 'request refused by the HTTP parser');
  answerSocket(socket, refusal);
}

/** The fastify option (fastify types the socket and error narrower than Node hands them over). */
export const clientErrorHandler = answerParserError as unknown as NonNullable<FastifyServerOptions['clientErrorHandler']>;

/** Node's server options: Host is checked by `refuseRequestsWithoutHost`, whose answer has our body. */
export const nodeServerOptions = { requireHostHeader: false } as const;

/** Answers CONNECT, unmet Expect headers and Host-less HTTP/1.1 requests in the error body. */
export function installServerRefusals(app: FastifyInstance): void {
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    app.log.info({ method: request.method, url: redactedUrl(request.url ?? '') }, 'request refused: CONNECT');
    answerSocket(socket, notImplemented('This server is not a proxy: CONNECT is not supported.'));
  });
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = expectationFailed(`Expect: ${JSON.stringify(request.headers.expect)} cannot be met: send Expect: 100-continue or no Expect header.`);
    const body = JSON.stringify(error.body());
    response.writeHead(error.statusCode, { ...EVERY_ANSWER_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
  // RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request that lacks Host.
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw badRequest('An HTTP/1.1 request must carry a Host header.');
    }
  });
}
