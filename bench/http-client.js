// A lean HTTP/1.1 client for latency figures: one keep-alive connection, one request at a time,
// responses with a Content-Length only. The socket reads into one reused buffer (net `onread`),
// so receiving a 170 KB page allocates nothing per chunk; what the figures then show is the
// server and the network, not the client's own garbage collector. Of each body it keeps the
// length and the last `keep` bytes (a page's links and metadata).
import { connect } from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');

export class LeanHttpClient {
  /** @param {string} origin such as http://127.0.0.1:8080 */
  static async connect(origin, keep = 1024) {
    const { hostname, port } = new URL(origin);
    const client = new LeanHttpClient(hostname, Number(port), keep);
    await new Promise((resolve, reject) => {
      client.socket.once('connect', resolve);
      client.socket.once('error', reject);
    });
    return client;
  }

  constructor(host, port, keep) {
    this.host = host;
    this.keep = keep;
    this.pending = null;
    this.broken = null;
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: Buffer.allocUnsafe(256 * 1024), callback: (length, buffer) => this.received(buffer, length) },
    });
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** GET `path`: `{ status, headers, length, tail }`, resolved once the last body byte arrived. */
  get(path, headers = {}) {
    if (this.pending) throw new Error('one request at a time');
    if (this.broken) return Promise.reject(this.broken);
    let head = `GET ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, header: null, headerBytes: [], status: 0, headers: {}, expected: -1, length: 0, tail: Buffer.alloc(this.keep), tailLength: 0 };
      this.socket.write(`${head}\r\n`);
    });
  }

  received(buffer, length) {
    const response = this.pending;
    if (!response) return this.fail(new Error('bytes received with no request pending'));
    let body = buffer.subarray(0, length);
    if (response.expected < 0) {
      response.headerBytes.push(Buffer.from(body)); // the head is small: copied until it is whole
      const head = Buffer.concat(response.headerBytes);
      const end = head.indexOf(HEADER_END);
      if (end < 0) return;
      const [statusLine, ...lines] = head.toString('latin1', 0, end).split('\r\n');
      response.status = Number(statusLine.split(' ')[1]);
      for (const line of lines) {
        const colon = line.indexOf(':');
        response.headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (response.headers['content-length'] === undefined) return this.fail(new Error(`no content-length in ${statusLine}`));
      response.expected = Number(response.headers['content-length']);
      body = head.subarray(end + HEADER_END.length);
    }
    response.length += body.length;
    this.keepTail(response, body);
    if (response.length > response.expected) return this.fail(new Error(`more body than content-length ${response.expected}`));
    if (response.length === response.expected) {
      this.pending = null;
      response.resolve({
        status: response.status,
        headers: response.headers,
        length: response.length,
        tail: response.tail.toString('utf8', 0, response.tailLength),
      });
    }
  }

  keepTail(response, body) {
    const { tail } = response;
    if (body.length >= tail.length) {
      body.copy(tail, 0, body.length - tail.length);
      response.tailLength = tail.length;
      return;
    }
    const kept = Math.min(response.tailLength, tail.length - body.length);
    tail.copy(tail, 0, response.tailLength - kept, response.tailLength);
    body.copy(tail, kept);
    response.tailLength = kept + body.length;
  }

  /** Rejects the pending request, and every later one: after a protocol error the connection is of no use. */
  fail(error) {
    const response = this.pending;
    this.pending = null;
    this.broken ??= error;
    response?.reject(error);
  }

  close() {
    this.broken ??= new Error('client closed');
    this.socket.end();
  }
}
