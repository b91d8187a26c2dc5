import { afterEach, describe, expect, it } from 'vitest';
import { TaskPool, type TaskPoolOptions } from '../../src/threads/task-pool.js';
import { FIXTURES } from '../helpers/fixtures.js';

// Real worker threads (fixtures/threads/tasks.mjs): the pool the event deleter and the job
// analyses run on.

interface Task {
  n: number;
  refuse?: boolean;
  exit?: number;
}

const pools: TaskPool<Task, { n: number; thread: number }>[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function pool(options: Partial<TaskPoolOptions> = {}) {
  const made = new TaskPool<Task, { n: number; thread: number }>({
    script: { from: new URL('threads/', FIXTURES).href, relative: './tasks.mjs' },
    workerData: {},
    size: 1,
    failed: 'the task failed',
    stopped: 'the task thread stopped',
    closed: 'the pool is closed',
    ...options,
  });
  pools.push(made);
  return made;
}

describe('a task pool', () => {
  it('answers every task with its own result, on at most `size` threads, started on first use', async () => {
    const tasks = pool({ size: 2 });
    expect(tasks.running).toBe(false);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => tasks.run({ n })));
    expect(answers.map((answer) => answer.n)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(answers.map((answer) => answer.thread)).size).toBe(2);
    expect(tasks.running).toBe(true);
  });

  it('fails a task its thread refuses with the reason, and goes on with the next', async () => {
    const tasks = pool();
    const [refused, next] = await Promise.allSettled([tasks.run({ n: 1, refuse: true }), tasks.run({ n: 2 })]);
    expect(refused).toEqual({ status: 'rejected', reason: new Error('the task failed: refused task 1') });
    expect(next).toMatchObject({ status: 'fulfilled', value: { n: 2 } });
  });

  it('fails the task of a thread that dies, and runs the next on a new thread', async () => {
    const tasks = pool();
    const first = await tasks.run({ n: 0 });
    const [died, next] = await Promise.allSettled([tasks.run({ n: 1, exit: 3 }), tasks.run({ n: 2 })]);
    expect(died).toEqual({ status: 'rejected', reason: new Error('the task thread stopped: exit code 3') });
    expect(next).toMatchObject({ status: 'fulfilled', value: { n: 2 } });
    expect((next as PromiseFulfilledResult<{ thread: number }>).value.thread).not.toBe(first.thread);
  });

  it('stops a thread left idle for idleMs, and starts another for the next task', async () => {
    const tasks = pool({ idleMs: 20 });
    const first = await tasks.run({ n: 1 });
    expect(tasks.running).toBe(true);
    await expect.poll(() => tasks.running, { timeout: 5_000, interval: 10 }).toBe(false);
    const second = await tasks.run({ n: 2 });
    expect(second.thread).not.toBe(first.thread);
  });

  it('fails waiting and running tasks with the reason close gives, and refuses tasks once closed', async () => {
    const tasks = pool();
    const settled = Promise.allSettled([tasks.run({ n: 1 }), tasks.run({ n: 2 })]);
    await tasks.close('shutting down');
    expect(await settled).toEqual([
      { status: 'rejected', reason: new Error('shutting down') },
      { status: 'rejected', reason: new Error('shutting down') },
    ]);
    await expect(tasks.run({ n: 3 })).rejects.toThrow(new Error('the pool is closed'));
    expect(tasks.closed).toBe(true);
  });
});
