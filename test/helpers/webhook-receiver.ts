import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One message a receiver took: its headers, its parsed body, and which of the receiver's secrets verified it. */
export interface ReceivedMessage {
  id: string;
  headers: IncomingHttpHeaders;
  body: { type: string; timestamp: string; data: unknown };
  /** The secrets (by index in `secrets`) whose signature the Standard Webhooks library accepted. */
  verifiedBy: number[];
}

/**
 * A webhook receiver on loopback that checks every request with the Standard Webhooks reference
 * library (the `standardwebhooks` package, which no one here wrote) against each secret it holds,
 * and answers what `answer` says (200 by default).
 */
export class WebhookReceiver {
  readonly messages: ReceivedMessage[] = [];
  /** Requests whose signature no secret verified. */
  readonly unverified: IncomingHttpHeaders[] = [];
  secrets: string[] = [];
  answer: (message: ReceivedMessage) => number | Promise<number> = () => 200;
  private server: Server | undefined;
  private waiters: (() => void)[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const payload = Buffer.concat(chunks).toString('utf8');
        const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) };
        const verifiedBy = this.secrets.flatMap((secret, index) => {
          try {
            new Webhook(secret).verify(payload, headers);
            return [index];
          } catch {
            return [];
          }
        });
        if (verifiedBy.length === 0) {
          this.unverified.push(request.headers);
          response.writeHead(400).end();
          return;
        }
        const message: ReceivedMessage = { id: headers['webhook-id'], headers: request.headers, body: JSON.parse(payload) as ReceivedMessage['body'], verifiedBy };
        const status = await this.answer(message);
        if (status >= 200 && status < 300) this.messages.push(message);
        response.writeHead(status).end();
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The events of every accepted batch (`event.batch`), in the order received (repeats included). */
  events(): { id: string; type: string }[] {
    return this.messages.filter((m) => m.body.type === 'event.batch').flatMap((m) => m.body.data as { id: string; type: string }[]);
  }

  /** Resolves once `ok` holds for the receiver (checked after each request), or rejects after `timeoutMs`. */
  async waitFor(ok: (receiver: this) => boolean, timeoutMs = 20_000, what = 'the receiver'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ok(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${this.messages.length} messages, ${this.unverified.length} unverified`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
