// @ts-check
import { useEffect, useRef } from 'preact/hooks';
import { follow } from '../../api/stream.js';
import { liveState } from '../layout.js';

/**
 * @typedef {import('./api.js').MonitorEvent} MonitorEvent
 * @typedef {{ namespace: string, entity: string, check: string }} Deleted
 * @typedef {{
 *   onPut: (e: MonitorEvent) => void,
 *   onDelete: (d: Deleted) => void,
 *   onOpen: (reconnected: boolean) => void,
 * }} LiveHandlers
 */

/**
 * Follows the event stream at `url` while the page shows (a new URL opens a new stream), and shows
 * its state in the header. The handlers may change at every render: the latest ones are called.
 * `onOpen(false)` when the stream first says to list, `onOpen(true)` when it says so again after a
 * reconnection that could not be resumed (the page lists again, quietly); a resumed stream replays
 * what the page missed, so it lists nothing.
 * @param {string | undefined} url undefined: no stream
 * @param {LiveHandlers} handlers
 */
export function useEventStream(url, handlers) {
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    if (!url) return;
    let opened = false;
    const stream = follow(url, {
      onOpen: () => {
        latest.current.onOpen(opened);
        opened = true;
      },
      onMessage: (m) => {
        let data;
        try {
          data = JSON.parse(m.data);
        } catch {
          return;
        }
        if (m.event === 'put') latest.current.onPut(data);
        else if (m.event === 'delete') latest.current.onDelete(data);
      },
    });
    // The header's indicator follows this stream's state until the page goes.
    const stop = stream.state.subscribe((s) => (liveState.value = s));
    return () => {
      stop();
      stream.close();
      liveState.value = null;
    };
  }, [url]);
}
