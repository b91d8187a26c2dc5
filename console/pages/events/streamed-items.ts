/**
 * The items of a list answer read as its bytes arrive (`{"items":[{...},{...}],...}`), each handed
 * over once complete: the gateway's event list is streamed whole, however long its range, so the
 * page stops reading once it has a page.
 */
export class StreamedItems<T> {
  private text = '';
  /** Where the scan goes on in `text`. */
  private at = 0;
  private inItems = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Where the item being read starts in `text`, or -1 between items. */
  private itemStart = -1;
  /** The list's `]` was read: no item follows. */
  ended = false;

  /** The items this chunk of text completed. */
  push(chunk: string): T[] {
    this.text += chunk;
    const items: T[] = [];
    if (!this.inItems) {
      const open = this.text.indexOf('[');
      if (open < 0) return items;
      this.inItems = true;
      this.at = open + 1;
    }
    const text = this.text;
    let i = this.at;
    for (; i < text.length && !this.ended; i++) {
      const c = text[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') {
        if (this.depth++ === 0) this.itemStart = i;
      } else if (c === '}' || c === ']') {
        if (this.depth === 0) this.ended = true;
        else if (--this.depth === 0) {
          items.push(JSON.parse(text.slice(this.itemStart, i + 1)) as T);
          this.itemStart = -1;
        }
      }
    }
    // Keep only the item not yet complete.
    const keep = this.itemStart >= 0 ? this.itemStart : i;
    this.text = text.slice(keep);
    this.at = i - keep;
    if (this.itemStart >= 0) this.itemStart = 0;
    return items;
  }
}
