// The receivers of bench/webhooks.bench.js in a process of their own (bench/README.md "webhooks"):
// a user's receiver runs on another machine, so its CPU must not be taken from the cores `serve`
// and the load share, and it is reported apart. Forked with the number of receivers, the delay of
// their answers (ms) and the mode:
// - `count` (the full-load runs): what a local receiver that answers at once needs, and a proof
//   of delivery that costs no parse: the events of a body are counted by their `{"id":"` (every
//   stored event's JSON begins so; inside a string a quote is escaped), a repeated `webhook-id`
//   is counted and its events are not; the lag is the oldest event's (the first `"created":`).
// - `full` (the 1,000 events/s run): every body parsed, every event id kept (a repeat counted
//   once), the order of each gateway's events checked against their `created`.
// IPC: sends `{ urls }` once listening; answers `{ events: [...] }` (per receiver) to `'events'`,
// `{ state: [...] }` (with the lags) to `'state'`; exits on `'close'`.
import { createServer } from 'node:http';

const [count, delayMs, mode] = [Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 0), process.argv[4] ?? 'count'];
const EVENT_START = Buffer.from('{"id":"');
const CREATED = Buffer.from('"created":');

function newState() {
  return { events: 0, messages: 0, again: 0, duplicates: 0, outOfOrder: 0, lags: [], seen: new Set(), ids: new Set(), lastCreated: new Map() };
}

/** The events of a body counted without parsing it, and the `created` of its first (oldest) one. */
function countEvents(body) {
  let events = 0;
  for (let at = body.indexOf(EVENT_START); at !== -1; at = body.indexOf(EVENT_START, at + EVENT_START.length)) events++;
  const created = body.indexOf(CREATED);
  const first = created === -1 ? NaN : Number.parseInt(body.toString('latin1', created + CREATED.length, created + CREATED.length + 16), 10);
  return { events, first };
}

/** Every event of a parsed body: new ids counted, repeats apart, each gateway's events in order of `created`. */
function checkEvents(state, data, now) {
  for (const event of data) {
    if (state.ids.has(event.id)) {
      state.duplicates++;
      continue;
    }
    state.ids.add(event.id);
    state.events++;
    state.lags.push(now - event.created);
    const gateway = event.gateway_id ?? '';
    if ((state.lastCreated.get(gateway) ?? -Infinity) > event.created) state.outOfOrder++;
    state.lastCreated.set(gateway, event.created);
  }
}

function receive(state, request, body) {
  const now = Date.now();
  const id = request.headers['webhook-id'];
  if (state.seen.has(id)) {
    state.again++;
    return;
  }
  state.seen.add(id);
  state.messages++;
  if (mode === 'full') {
    const parsed = JSON.parse(body.toString('utf8'));
    if (Array.isArray(parsed.data)) checkEvents(state, parsed.data, now);
    return;
  }
  const { events, first } = countEvents(body);
  state.events += events;
  if (events > 0) state.lags.push(now - first);
}

async function startReceiver(state) {
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const answer = () => {
        if (response.destroyed) return;
        response.writeHead(204).end();
        receive(state, request, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}/hook`;
}

const states = Array.from({ length: count }, newState);
const urls = await Promise.all(states.map(startReceiver));
process.send({ urls });
process.on('message', (message) => {
  if (message === 'events') process.send({ events: states.map((state) => state.events) });
  else if (message === 'state') {
    const state = states.map(({ events, messages, again, duplicates, outOfOrder, lags }) => ({ events, messages, again, duplicates, outOfOrder, lags }));
    process.send({ state });
  } else if (message === 'close') process.exit(0);
});
