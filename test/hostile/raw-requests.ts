/**
 * Requests that Node's HTTP parser (or Node's server) refuses before any route sees them, as raw
 * bytes, with the status line and the start of the details each must be answered with.
 */

/** A request line and headers as raw text, lines ended with CR LF, with a Host unless `host` is false. */
const head = (requestLine: string, headers: string[] = [], host = true) =>
  `${[requestLine, ...(host ? ['Host: scanhub.test'] : []), ...headers].join('\r\n')}\r\n\r\n`;

export const RAW_REQUESTS: [name: string, request: () => string | Buffer, statusLine: string, details: RegExp][] = [
  ['a NUL in the path', () => head('GET /acme/us\0ers HTTP/1.1'), 'HTTP/1.1 400 Bad Request', /^The request path is not valid \(/],
  ['a space in the path', () => head('GET /acme/us ers HTTP/1.1'), 'HTTP/1.1 400 Bad Request', /^The request line is not valid HTTP\/1\.1 \(/],
  [
    'invalid UTF-8 in the path',
    () => Buffer.concat([Buffer.from('GET /acme/'), Buffer.from([0xff, 0xfe]), Buffer.from(head(' HTTP/1.1').slice(1))]),
    'HTTP/1.1 400 Bad Request',
    /^The request path is not valid \(/,
  ],
  ['UTF-8 not percent-encoded in the path', () => head('GET /acme/gateways/Überweg HTTP/1.1'), 'HTTP/1.1 400 Bad Request', /^The request path is not valid \(/],
  ['an unknown method', () => head('FROB /healthz HTTP/1.1'), 'HTTP/1.1 501 Not Implemented', /^The method "FROB" is not one this server implements/],
  ['a lower-case method', () => head('get /healthz HTTP/1.1'), 'HTTP/1.1 501 Not Implemented', /^The method "get" is not one this server implements/],
  ['a NUL in a header value', () => head('GET /healthz HTTP/1.1', ['X-Fuzz: a\0b']), 'HTTP/1.1 400 Bad Request', /^A header is not valid HTTP \(/],
  ['a NUL in a header name', () => head('GET /healthz HTTP/1.1', ['X-Fu\0zz: ab']), 'HTTP/1.1 400 Bad Request', /^A header is not valid HTTP \(/],
  ['a folded header line', () => head('GET /healthz HTTP/1.1', ['X-Fuzz: a', ' b']), 'HTTP/1.1 400 Bad Request', /^A header is not valid HTTP \(/],
  ['bare LF line ends', () => 'GET /healthz HTTP/1.1\nHost: scanhub.test\n\n', 'HTTP/1.1 400 Bad Request', /^The request line is not valid HTTP\/1\.1 \(/],
  ['an unknown HTTP version', () => head('GET /healthz HTTP/9.9'), 'HTTP/1.1 400 Bad Request', /^The request line is not valid HTTP\/1\.1 \(/],
  [
    'Content-Length and Transfer-Encoding both',
    () => head('POST /auth/login HTTP/1.1', ['Content-Type: application/json', 'Content-Length: 2', 'Transfer-Encoding: chunked']) + '0\r\n\r\n',
    'HTTP/1.1 400 Bad Request',
    /^The length of the request body is not clear \(/,
  ],
  [
    'two Content-Lengths',
    () => head('POST /auth/login HTTP/1.1', ['Content-Type: application/json', 'Content-Length: 2', 'Content-Length: 3']) + '{}',
    'HTTP/1.1 400 Bad Request',
    /^The length of the request body is not clear \(/,
  ],
  [
    'a chunk size that is not hexadecimal',
    () => head('POST /auth/login HTTP/1.1', ['Content-Type: application/json', 'Transfer-Encoding: chunked']) + 'zz\r\n{}\r\n0\r\n\r\n',
    'HTTP/1.1 400 Bad Request',
    /^The length of the request body is not clear \(/,
  ],
  ['a 100 KB query string', () => head(`GET /acme/events?gateway_id=${'x'.repeat(100_000)} HTTP/1.1`), 'HTTP/1.1 431 Request Header Fields Too Large', /^The request line and headers are larger than 16 KiB/],
  ['a 20 KB Authorization header', () => head('GET /acme/me HTTP/1.1', [`Authorization: Bearer ${'x'.repeat(20_000)}`]), 'HTTP/1.1 431 Request Header Fields Too Large', /^The request line and headers are larger than 16 KiB/],
  ['no Host header in HTTP/1.1', () => head('GET /healthz HTTP/1.1', [], false), 'HTTP/1.1 400 Bad Request', /^An HTTP\/1\.1 request must carry a Host header\.$/],
  ['CONNECT', () => head('CONNECT example.com:443 HTTP/1.1'), 'HTTP/1.1 501 Not Implemented', /^This server is not a proxy: CONNECT is not supported\.$/],
  [
    'an Expect header other than 100-continue',
    () => head('POST /auth/login HTTP/1.1', ['Expect: 200-ok', 'Content-Type: application/json', 'Content-Length: 2']) + '{}',
    'HTTP/1.1 417 Expectation Failed',
    /^Expect: "200-ok" cannot be met/,
  ],
  ['a TLS ClientHello on the HTTP port', () => Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]), 'HTTP/1.1 400 Bad Request', /^This port serves plain HTTP, not HTTPS/],
  ['the HTTP/2 preface', () => 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'HTTP/1.1 400 Bad Request', /^This server speaks HTTP\/1\.1/],
];
