import { connect } from 'node:net';

/** One HTTP answer read off a raw socket: what the client saw, byte for byte where it matters. */
export interface RawAnswer {
  /** `HTTP/1.1 400 Bad Request` */
  statusLine: string;
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/**
 * Writes `request` as it is (no client library checks or fixes it) to the server of `url` and
 * reads the first answer: up to its Content-Length, or until the server closes the connection.
 */
export function rawHttp(url: string, request: string | Buffer): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = () => {
      if (settled) return;
      const answer = parse(received);
      if (!answer) return;
      settled = true;
      socket.destroy();
      resolve(answer);
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish();
    });
    // The server may close (or reset) the connection right after its answer, while the request is still being written.
    socket.on('error', () => {});
    socket.on('close', () => {
      finish();
      if (!settled) reject(new Error(`the connection closed without a whole answer; received ${JSON.stringify(received.toString('latin1'))}`));
    });
    socket.write(request);
  });
}

/** The answer in `bytes` once it is whole (head and Content-Length bytes of body), else undefined. */
function parse(bytes: Buffer): RawAnswer | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  // An interim answer (100 Continue) comes before the one that counts.
  if (/^HTTP\/1\.1 1\d\d /.test(bytes.subarray(0, 13).toString('latin1'))) return parse(bytes.subarray(headEnd + 4));
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const length = Number(headers['content-length'] ?? 0);
  const bodyBytes = bytes.subarray(headEnd + 4);
  if (bodyBytes.length < length) return undefined;
  const text = bodyBytes.subarray(0, length).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { statusLine: statusLine!, status: Number(statusLine!.split(' ')[1]), headers, text, body };
}
