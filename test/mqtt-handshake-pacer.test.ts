import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HandshakePacer } from '../src/mqtt/handshake-pacer.js';

/** One turn of the event loop: resolves in the check phase after the pacer's turn queued before it. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('HandshakePacer', () => {
  it('begins at most perTurn connections per turn of the event loop, first accepted first, skipping those closed while they waited', async () => {
    const begun: number[] = [];
    const sockets = Array.from({ length: 40 }, () => new Socket());
    const index = new Map(sockets.map((socket, i) => [socket, i]));
    const pacer = new HandshakePacer((socket) => begun.push(index.get(socket)!), 16);
    for (const socket of sockets) pacer.add(socket);
    expect([begun.length, pacer.waiting]).toEqual([0, 40]);
    sockets[20]!.destroy();
    sockets[21]!.destroy();
    await nextTurn();
    expect(begun).toEqual(Array.from({ length: 16 }, (_, i) => i));
    await nextTurn();
    expect(begun.slice(16)).toEqual([16, 17, 18, 19, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]);
    await nextTurn();
    expect(begun.slice(32)).toEqual([34, 35, 36, 37, 38, 39]);
    expect(pacer.waiting).toBe(0);
  });

  it('begins a connection added after the queue ran empty in the next turn', async () => {
    const begun: Socket[] = [];
    const pacer = new HandshakePacer((socket) => begun.push(socket), 2);
    const [first, second] = [new Socket(), new Socket()];
    pacer.add(first);
    await nextTurn();
    pacer.add(second);
    await nextTurn();
    expect(begun).toEqual([first, second]);
    expect(pacer.waiting).toBe(0);
  });
});
