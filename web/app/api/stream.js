// @ts-check
import { signal } from '@preact/signals';
import { accessToken } from './session.js';

/**
 * @typedef {'connecting' | 'live' | 'down'} StreamState
 * @typedef {{ event: string, id: string | undefined, data: string }} StreamMessage
 */

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * Follows an SSE stream of the API (fetch, not EventSource: the stream needs the Authorization
 * header). Reconnects with backoff, sending the id of the last message seen as `Last-Event-ID`, so
 * the server replays what was missed (`resume`). `onOpen` runs when the stream says the page must
 * list (`start`: a new stream; `relist`: what was missed cannot be replayed), once per connection at
 * most, and never after a `resume`. Closed with `close()`.
 * @param {string} url
 * @param {{ onMessage: (m: StreamMessage) => void, onOpen?: () => void }} handlers
 */
export function follow(url, handlers) {
  /** @type {import('@preact/signals').Signal<StreamState>} */
  const state = signal('connecting');
  const ctl = new AbortController();
  let delay = RETRY_MIN_MS;
  /** @type {string | undefined} */
  let lastEventId;

  const run = async () => {
    while (!ctl.signal.aborted) {
      state.value = 'connecting';
      try {
        /** @type {Record<string, string>} */
        const headers = { Authorization: `Bearer ${await accessToken()}`, Accept: 'text/event-stream' };
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        const res = await fetch(url, { headers, signal: ctl.signal });
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        state.value = 'live';
        delay = RETRY_MIN_MS;
        await read(res.body, (m) => {
          if (m.id !== undefined) lastEventId = m.id;
          if (m.event === 'start' || m.event === 'relist') handlers.onOpen?.();
          handlers.onMessage(m);
        });
      } catch {
        /* reconnect below, unless closed */
      }
      if (ctl.signal.aborted) break;
      state.value = 'down';
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  };
  void run();
  return { state, close: () => ctl.abort() };
}

/**
 * Parses SSE messages off a body until it ends (comments are heartbeats).
 * @param {ReadableStream<Uint8Array>} body
 * @param {(m: StreamMessage) => void} onMessage
 */
async function read(body, onMessage) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message';
      /** @type {string | undefined} */
      let id;
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = v;
        else if (field === 'id') id = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length) onMessage({ event, id, data: data.join('\n') });
    }
  }
}
