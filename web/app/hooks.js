// @ts-check
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/**
 * @template T
 * @typedef {{ data: T | undefined, error: unknown, loading: boolean, reload: () => void }} Async
 */

/**
 * Runs `load` when `deps` change (the previous run is aborted) and on `reload()`.
 * @template T
 * @param {(signal: AbortSignal) => Promise<T>} load
 * @param {unknown[]} deps
 * @returns {Async<T>}
 */
export function useAsync(load, deps) {
  const [state, setState] = useState(
    /** @type {{ data: T | undefined, error: unknown, loading: boolean }} */ ({
      data: undefined,
      error: undefined,
      loading: true,
    }),
  );
  const [tick, setTick] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    latest
      .current(ctl.signal)
      .then((data) => !ctl.signal.aborted && setState({ data, error: undefined, loading: false }))
      .catch((error) => !ctl.signal.aborted && setState((s) => ({ data: s.data, error, loading: false })));
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/**
 * A value that follows `value` after it has been still for `ms` (typed filters).
 * @template T
 * @param {T} value
 * @param {number} ms
 * @returns {T}
 */
export function useDebounced(value, ms) {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}
