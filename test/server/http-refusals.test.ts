import { describe, expect, it } from 'vitest';
import { parserRefusal } from '../../src/server/http-refusals.js';

/** An error as Node's HTTP parser reports it to `clientError`. */
const parserError = (code: string, reason: string, packet: string, bytesParsed: number) =>
  Object.assign(new Error(`Parse Error: ${reason}`), { code, reason, rawPacket: Buffer.from(packet, 'latin1'), bytesParsed });

describe('parserRefusal', () => {
  it('quotes the method of the refused request, also behind a pipelined one', () => {
    const first = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const refusal = parserRefusal(parserError('HPE_INVALID_METHOD', 'Invalid method encountered', `${first}FROB / HTTP/1.1\r\n\r\n`, first.length + 1));
    expect({ status: refusal.statusCode, body: refusal.body() }).toEqual({
      status: 501,
      body: { title: 'Not Implemented', details: 'The method "FROB" is not one this server implements: use one of GET, POST, PUT, PATCH, DELETE, OPTIONS, in capitals.' },
    });
  });

  it('cuts a long method short and shows control characters escaped', () => {
    const refusal = parserRefusal(parserError('HPE_INVALID_METHOD', 'Invalid method encountered', `${'A'.repeat(30)}\u0001 / HTTP/1.1\r\n\r\n`, 0));
    expect(refusal.details).toBe(`The method "${'A'.repeat(20)}..." is not one this server implements: use one of GET, POST, PUT, PATCH, DELETE, OPTIONS, in capitals.`);
  });

  it('an error the parser may add later: 400 with its reason', () => {
    const refusal = parserRefusal(parserError('HPE_SOMETHING_NEW', 'Something new', 'GET / HTTP/1.1\r\n\r\n', 3));
    expect({ status: refusal.statusCode, body: refusal.body() }).toEqual({ status: 400, body: { title: 'Bad Request', details: 'The request is not valid HTTP/1.1 (Something new).' } });
  });

  it('a request that did not arrive in time: 408', () => {
    const refusal = parserRefusal(Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
    expect({ status: refusal.statusCode, body: refusal.body() }).toEqual({
      status: 408,
      body: { title: 'Request Timeout', details: 'The request did not arrive in time: send it again.' },
    });
  });
});
