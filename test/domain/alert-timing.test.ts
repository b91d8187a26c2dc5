// Issue 32's promise for gateway_offline (docs/alerts.md): with after_seconds 60 the alert opens
// between 60 and 70 s after the gateway's real last message, whatever the lag of the stored last
// message (LAST_MESSAGE_RESOLUTION_MS) and wherever the evaluator's 2 s rounds fall.
import { describe, expect, it } from 'vitest';
import { DEFAULT_ALERT_INTERVAL_MS, gatewayOffline } from '../../src/domain/alerts.js';
import { LAST_MESSAGE_RESOLUTION_MS, lastMessageDue } from '../../src/domain/connectivity.js';

/** The silence (real last message to opening) for a gateway whose messages came every `period` ms until `realLast`. */
function silenceAtOpening(realLast: number, period: number, phase: number): number {
  // What ingest stored: the messages up to realLast, each written only when lastMessageDue says so.
  let stored: number | null = null;
  for (let at = realLast % period; at <= realLast; at += period) if (lastMessageDue(stored, at)) stored = at;
  for (let now = phase; ; now += DEFAULT_ALERT_INTERVAL_MS) {
    if (now > realLast && gatewayOffline(stored, now, 60)) return now - realLast;
  }
}

describe('gateway_offline opens 60 to 70 s after the real last message', () => {
  it('for every lag of the stored last message and every phase of the evaluation rounds', () => {
    const silences: number[] = [];
    for (const period of [250, 1_000, 3_000, 7_000]) {
      for (let realLast = 100_000; realLast < 100_000 + LAST_MESSAGE_RESOLUTION_MS + period; realLast += 250) {
        for (let phase = 0; phase < DEFAULT_ALERT_INTERVAL_MS; phase += 125) silences.push(silenceAtOpening(realLast, period, phase));
      }
    }
    expect([Math.min(...silences) >= 60_000, Math.max(...silences) <= 70_000]).toEqual([true, true]);
  });
});
