/**
 * Freezes a value and everything it holds. With `--debug-freeze-reads` the runtime freezes what a
 * turn reads of its side records, so an actor that changes one in place fails loudly instead of
 * corrupting the cache later turns read (docs/architecture.md#owned-state-stays-decoded).
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value as object)) deepFreeze(v);
  return value;
}
