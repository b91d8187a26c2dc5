import { describe, expect, it } from 'vitest';
import { SseLines, type StreamItem } from '../../src/domain/sse.js';

const STREAM = ': connected\r\nid: c1\r\ndata: {"a":1}\r\n\r\nid: c2\ndata: first\ndata: second\n\n: too slow, resume with Last-Event-ID c2\r\rdata:no space\revent: x\r\r';

const EXPECTED: StreamItem[] = [
  { kind: 'comment', text: 'connected' },
  { kind: 'event', id: 'c1', event: undefined, data: '{"a":1}' },
  { kind: 'event', id: 'c2', event: undefined, data: 'first\nsecond' },
  { kind: 'comment', text: 'too slow, resume with Last-Event-ID c2' },
  { kind: 'event', id: undefined, event: 'x', data: 'no space' },
];

describe('SseLines', () => {
  it('reads events and comments with CRLF, LF and CR line ends in one chunk', () => {
    expect(new SseLines().push(STREAM)).toEqual(EXPECTED);
  });

  it('reads the same items however the text is cut, a CRLF split between chunks included', () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      const lines = new SseLines();
      expect([...lines.push(STREAM.slice(0, cut)), ...lines.push(STREAM.slice(cut))], `cut at ${cut}`).toEqual(EXPECTED);
    }
    const lines = new SseLines();
    expect([...STREAM].flatMap((character) => lines.push(character))).toEqual(EXPECTED);
  });

  it('ignores an id holding NUL, and an event without data', () => {
    expect(new SseLines().push('id: a\0b\ndata: x\n\nid: lone\n\n')).toEqual([{ kind: 'event', id: undefined, event: undefined, data: 'x' }]);
  });
});
