/** One message of a `text/event-stream`: its event name (`message` unless named), id and data lines joined. */
interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

/**
 * Reads a `text/event-stream` as it arrives, chunk by chunk: complete messages come out of `feed`,
 * blocks of comments only (keep-alives) are counted.
 */
export class SseParser {
  comments = 0;
  private buf = '';

  feed(chunk: string): SseMessage[] {
    this.buf += chunk;
    const out: SseMessage[] = [];
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      const m: SseMessage = { event: 'message', data: '' };
      const data: string[] = [];
      let comment = true;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        comment = false;
        const at = line.indexOf(':');
        const [k, v] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1).replace(/^ /, '')];
        if (k === 'event') m.event = v;
        else if (k === 'id') m.id = v;
        else if (k === 'data') data.push(v);
      }
      if (comment) {
        this.comments++;
        continue;
      }
      m.data = data.join('\n');
      out.push(m);
    }
    return out;
  }
}
