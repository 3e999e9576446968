// @ts-check
import { computed, signal } from '@preact/signals';
import { route, setParams } from './router.js';

const STORE = 'monitor.namespace';
/** Every namespace at once, where a page can show them (the API's cross-namespace lists). */
export const ALL = '*';

const remembered = signal(localStorage.getItem(STORE) || 'default');

/** The namespace of the page: the URL's `namespace`, else the one chosen last. */
export const namespace = computed(() => route.value.params.get('namespace') || remembered.value);

/**
 * Switches namespace: remembered for the next visit and written into the URL.
 * @param {string} ns
 */
export function setNamespace(ns) {
  remembered.value = ns;
  try {
    localStorage.setItem(STORE, ns);
  } catch {
    /* private mode */
  }
  setParams({ namespace: ns, continue: undefined, page: undefined }, { replace: false });
}
