import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { SupervisedThread, crashThreadForTest, type RestartPolicy, type ThreadLog } from '../../src/threads/supervised-thread.js';
import { FIXTURES } from '../helpers/fixtures.js';

// Real worker threads (fixtures/threads/*.mjs) dying for real: the supervisor replaces them,
// backs off when they keep dying, and never restarts one it closed.

interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  [field: string]: unknown;
}

const threads: SupervisedThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.close()));
});

function supervise(fixture: string, policy: RestartPolicy) {
  const log: LogLine[] = [];
  const sink = (level: LogLine['level']) => (fields: object, msg: string) => log.push({ level, msg, ...fields });
  const messages: unknown[] = [];
  const crashes: string[] = [];
  let messageArrived = () => {};
  /** Resolves once the thread has sent `count` messages in all. */
  const messagesReceived = (count: number) =>
    new Promise<void>((resolve) => {
      messageArrived = () => messages.length >= count && resolve();
      messageArrived();
    });
  const thread = new SupervisedThread({
    name: 'test',
    entry: new URL(`threads/${fixture}`, FIXTURES),
    workerData: {},
    log: { info: sink('info'), warn: sink('warn'), error: sink('error') } as unknown as ThreadLog,
    onMessage: (message) => {
      messages.push(message);
      messageArrived();
    },
    onCrash: (cause) => crashes.push(cause.message),
    policy,
  });
  threads.push(thread);
  return { thread, log, messages, crashes, messagesReceived };
}

/** The restart delay announced with each of the next `count` crashes, and when each crash happened. */
async function nextCrashes(thread: SupervisedThread, count: number): Promise<{ delays: (number | undefined)[]; at: number[] }> {
  const delays: (number | undefined)[] = [];
  const at: number[] = [];
  while (delays.length < count) {
    const [, delay] = (await once(thread, 'crash')) as [Error, number | undefined];
    delays.push(delay);
    at.push(performance.now());
  }
  return { delays, at };
}

describe('a supervised thread', () => {
  it('that dies at every start is restarted ever more slowly (doubling up to the maximum), not in a loop', async () => {
    const { thread, log, crashes } = supervise('dies-at-start.mjs', { firstDelayMs: 20, maxDelayMs: 80, stableMs: 60_000 });
    const { delays, at } = await nextCrashes(thread, 5);
    expect(delays).toEqual([20, 40, 80, 80, 80]);
    // Each replacement started only after the announced delay: no spinning.
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(delays[i - 1]! - 1);
    expect(thread.starts).toBe(5);
    expect(thread.state).toBe('restarting');
    expect(crashes).toEqual(new Array(5).fill('cannot open the database'));
    expect(log.map(({ level, msg, restart_in_ms, err }) => ({ level, msg, restart_in_ms, cause: (err as Error).message }))).toEqual(
      delays.map((delay) => ({ level: 'error', msg: 'test thread crashed, restarting', restart_in_ms: delay, cause: 'cannot open the database' })),
    );

    // close() during the back-off calls the pending restart off.
    await thread.close();
    expect(thread.state).toBe('closed');
    // Proving that nothing happens needs a wait: twice the longest delay.
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect(thread.starts).toBe(5);
  });

  it('that dies after it was ready is replaced; the replacement takes messages; the cause is logged', async () => {
    const { thread, log, messages, crashes, messagesReceived } = supervise('echo.mjs', { firstDelayMs: 10, maxDelayMs: 1000, stableMs: 60_000 });
    await thread.reached('running');
    const release = crashThreadForTest(thread, 'now', { holdRestart: true });
    await thread.reached('restarting');
    expect(thread.cause?.message).toBe('test crash of the echo thread');
    // No thread runs: nothing can be sent to it.
    expect(thread.post({ n: 1 })).toBe(false);
    release();
    await thread.reached('running');
    expect(thread.post({ n: 2 })).toBe(true);
    await messagesReceived(1);
    expect(messages).toEqual([{ echo: { n: 2 } }]);
    expect({ starts: thread.starts, cause: thread.cause, crashes }).toEqual({ starts: 2, cause: undefined, crashes: ['test crash of the echo thread'] });
    expect(log.map(({ level, msg, restart_in_ms, cause }) => ({ level, msg, restart_in_ms, cause }))).toEqual([
      { level: 'error', msg: 'test thread crashed, restarting', restart_in_ms: 10, cause: undefined },
      { level: 'info', msg: 'test thread restarted', restart_in_ms: undefined, cause: 'test crash of the echo thread' },
    ]);
    expect((log[0]!.err as Error).message).toBe('test crash of the echo thread');
  });

  it('that exits without an error is replaced too, the exit code being the cause', async () => {
    const { thread, crashes } = supervise('echo.mjs', { firstDelayMs: 10, maxDelayMs: 1000, stableMs: 60_000 });
    await thread.reached('running');
    thread.post({ exit: 3 });
    await thread.reached('restarting');
    await thread.reached('running');
    expect({ starts: thread.starts, crashes }).toEqual({ starts: 2, crashes: ['the test thread exited with code 3'] });
  });

  it('that lived past stableMs before dying is replaced after the first delay again', async () => {
    const { thread } = supervise('echo.mjs', { firstDelayMs: 10, maxDelayMs: 1000, stableMs: 0 });
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      await thread.reached('running');
      const crashed = once(thread, 'crash');
      crashThreadForTest(thread, 'now');
      delays.push(((await crashed) as [Error, number])[1]);
    }
    expect(delays).toEqual([10, 10, 10]);
  });

  it('is not restarted after close(), which waits for it to exit; a crash after stopRestarts() is final', async () => {
    const closed = supervise('echo.mjs', { firstDelayMs: 10, maxDelayMs: 1000, stableMs: 60_000 });
    await closed.thread.reached('running');
    await closed.thread.close();
    expect({ state: closed.thread.state, starts: closed.thread.starts, crashes: closed.crashes, log: closed.log }).toEqual({
      state: 'closed',
      starts: 1,
      crashes: [],
      log: [],
    });

    const stopped = supervise('echo.mjs', { firstDelayMs: 10, maxDelayMs: 1000, stableMs: 60_000 });
    await stopped.thread.reached('running');
    stopped.thread.stopRestarts();
    crashThreadForTest(stopped.thread, 'now');
    await stopped.thread.reached('closed');
    expect({ starts: stopped.thread.starts, crashes: stopped.crashes, msg: stopped.log.map((line) => line.msg) }).toEqual({
      starts: 1,
      crashes: ['test crash of the echo thread'],
      msg: ['test thread crashed during shutdown, not restarted'],
    });
  });
});
