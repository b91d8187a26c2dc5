/**
 * The WHATWG "event stream" format (Server-Sent Events) as text: the one parser of the live event
 * stream, for the CLI's reader (src/client/event-stream.ts, which decodes the bytes) and the
 * console's (console/lib/event-stream.ts). Nothing here may import Node: the console bundles it.
 */

/** A dispatched event, or a comment line (its text after `:` and one space). */
export type StreamItem = { kind: 'event'; id: string | undefined; event: string | undefined; data: string } | { kind: 'comment'; text: string };

/** Splits the text of an event stream into events and comments, however the text is cut. */
export class SseLines {
  private buffer = '';
  private data: string[] = [];
  private id: string | undefined;
  private event: string | undefined;
  /** A CR ended the last chunk: an LF that starts the next one belongs to it. */
  private pendingCr = false;

  /** The items completed by this chunk of text. */
  push(text: string): StreamItem[] {
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = text.endsWith('\r');
    this.buffer += text;
    const items: StreamItem[] = [];
    // One pass over the buffer: slicing the rest after each line would copy it once per line.
    const ends = /\r\n|\r|\n/g;
    let start = 0;
    for (let end = ends.exec(this.buffer); end; end = ends.exec(this.buffer)) {
      this.line(this.buffer.slice(start, end.index), items);
      start = end.index + end[0].length;
    }
    this.buffer = this.buffer.slice(start);
    return items;
  }

  private line(line: string, items: StreamItem[]): void {
    if (line === '') {
      // A blank line dispatches the event gathered so far, if it has data.
      if (this.data.length > 0) items.push({ kind: 'event', id: this.id, event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.id = undefined;
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) {
      items.push({ kind: 'comment', text: line.slice(line.startsWith(': ') ? 2 : 1) });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'event') this.event = value;
  }
}
