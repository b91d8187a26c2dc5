// Helpers shared by the benchmarks: JSON-line reporting, percentiles, API calls.
import { createServer } from 'node:net';
import { request } from 'undici';

/** Prints one figure as a JSON line; `pass` is set when a target is given (`cmp` says which way). */
export function report(bench, metric, value, unit, target, cmp = '<=') {
  const line = { bench, metric, value: Math.round(value * 1000) / 1000, unit };
  if (target !== undefined) {
    line.target = `${cmp} ${target}`;
    line.pass = cmp === '<=' ? value <= target : value >= target;
  }
  console.log(JSON.stringify(line));
  return line;
}

/** The p-th percentile (0..100) of the numbers, nearest-rank. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The median of the numbers (the mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One JSON call to the API; throws with the status and body on an error answer. */
export async function api(url, method, path, token, body) {
  const response = await request(url + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 400) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Sends SIGTERM to a child process and resolves once it has exited (at once if it already had). */
export function terminate(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

/** A free TCP port on loopback (taken by the OS, then released for the caller). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
