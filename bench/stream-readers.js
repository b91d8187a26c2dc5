// The readers of stream.bench.js, their own process: `streams` connections to
// GET /{customer}/events/stream (node:http, as any SSE client), every one read in full. On each
// chunk that arrives, the publish time stamped in each event's scan_code (`"scan_code":"t<ms>"`)
// gives the publish-to-stream latency of that event on that stream. Talks to the parent over IPC:
// config in, 'open' once every stream answered, 'measure' to start keeping latencies, 'report'
// for the figures.
import { request } from 'node:http';

const now = () => performance.timeOrigin + performance.now();
const MARK = Buffer.from('"scan_code":"t');

process.once('message', async (config) => {
  let measuring = false;
  const latencies = [];
  const streams = [];
  const opened = [];
  for (let s = 0; s < config.streams; s++) {
    const stream = { events: 0, bytes: 0, ended: false, tail: Buffer.alloc(0) };
    streams.push(stream);
    opened.push(
      new Promise((resolve, reject) => {
        const outgoing = request(`${config.url}/${config.customer}/events/stream`, { headers: { authorization: `Bearer ${config.token}`, accept: 'text/event-stream' }, agent: false });
        outgoing.once('error', reject);
        outgoing.once('response', (response) => {
          if (response.statusCode !== 200) return reject(new Error(`stream ${s}: ${response.statusCode}`));
          stream.close = () => outgoing.destroy();
          response.on('data', (chunk) => {
            const at = now();
            stream.bytes += chunk.length;
            // A mark cut between two chunks is found in the tail kept from the previous one.
            const data = stream.tail.length ? Buffer.concat([stream.tail, chunk]) : chunk;
            let offset = 0;
            for (let i = data.indexOf(MARK); i >= 0; i = data.indexOf(MARK, offset)) {
              const start = i + MARK.length;
              const end = data.indexOf(0x22, start);
              if (end < 0) break;
              stream.events++;
              if (measuring) latencies.push(at - Number(data.toString('latin1', start, end)));
              offset = end;
            }
            stream.tail = data.subarray(Math.max(offset, data.length - 64));
          });
          response.on('end', () => (stream.ended = true));
          resolve();
        });
        outgoing.end();
      }),
    );
  }
  await Promise.all(opened);
  process.send({ type: 'open' });
  process.on('message', (message) => {
    if (message === 'measure') measuring = true;
    if (message === 'report') {
      measuring = false;
      latencies.sort((a, b) => a - b);
      const at = (p) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))];
      const counts = streams.map((stream) => stream.events);
      process.send({
        type: 'report',
        samples: latencies.length,
        p50: at(50),
        p99: at(99),
        max: latencies[latencies.length - 1],
        minEvents: Math.min(...counts),
        maxEvents: Math.max(...counts),
        ended: streams.filter((stream) => stream.ended).length,
        bytes: streams.reduce((sum, stream) => sum + stream.bytes, 0),
      });
      streams.forEach((stream) => stream.close?.());
      process.disconnect();
    }
  });
});
