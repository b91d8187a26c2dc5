// The floor of what Node's TLS costs (node-tls in bench/README.md): a bare node:tls server with the
// deployment's CA and MQTT server pair, client certificates required, scanhub's listen backlog and
// no session tickets, that answers CONNACK 0 and PUBACKs and does nothing else. What scanhub spends
// beyond it is ours. `node bench/bare-tls-broker.js DATA_DIR` prints its port once it listens.
import { constants } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { frameOf } from './mqtt-packets.js';

const pki = join(process.argv[2], 'pki');
const server = createServer(
  { key: readFileSync(join(pki, 'server.key')), cert: readFileSync(join(pki, 'server.crt')), ca: readFileSync(join(pki, 'ca.crt')), requestCert: true, rejectUnauthorized: true, secureOptions: constants.SSL_OP_NO_TICKET },
  (socket) => {
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        const frame = frameOf(pending);
        if (!frame) return;
        const [at, length] = frame;
        const type = pending[0] >> 4;
        const body = pending.subarray(at, at + length);
        if (type === 1) socket.write(Buffer.from([0x20, 2, 0, 0]));
        else if (type === 3 && (pending[0] & 0x06) === 0x02) {
          const topicLength = body.readUInt16BE(0);
          socket.write(Buffer.from([0x40, 2, body[2 + topicLength], body[3 + topicLength]]));
        } else if (type === 12) socket.write(Buffer.from([0xd0, 0]));
        else if (type === 14) socket.end();
        pending = pending.subarray(at + length);
      }
    });
  },
);
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => console.log(server.address().port));
process.on('SIGTERM', () => process.exit(0));
