// @ts-check
import { useEffect, useRef, useState } from 'preact/hooks';
import { all, nsPath } from '../../api/client.js';

/**
 * @typedef {{ metadata: { name: string, namespace: string } }} Named
 * @typedef {{ entity?: Named, check?: { status?: number, output?: string, executed?: number } }} KeepaliveEvent
 */

/** Names per request: the selector stays a few kilobytes, well within a URL. */
const CHUNK = 100;

/** @param {Named} e */
export const keyOf = (e) => `${e.metadata.namespace}/${e.metadata.name}`;

/**
 * The keepalive events of the entities shown, fetched for those not asked yet, a hundred names per
 * request: the events list with `check.name == keepalive && entity.name in (…)`, in each entity's
 * namespace. The map holds null for an entity without a keepalive event (a proxy entity), `false`
 * when the lookup failed (asked again at the next change of the list), and nothing for one not
 * answered yet; it starts over when `version` changes (the list was reloaded).
 * @param {Named[]} entities
 * @param {number} version
 * @returns {Map<string, KeepaliveEvent | null | false>}
 */
export function useKeepalives(entities, version) {
  const [known, setKnown] = useState(/** @type {Map<string, KeepaliveEvent | null | false>} */ (new Map()));
  const asked = useRef({ version: -1, keys: new Set() });

  useEffect(() => {
    if (asked.current.version !== version) {
      asked.current = { version, keys: new Set() };
      setKnown(new Map());
    }
    const ask = asked.current;
    /** @type {Map<string, string[]>} */
    const byNs = new Map();
    for (const e of entities) {
      const k = keyOf(e);
      if (ask.keys.has(k)) continue;
      ask.keys.add(k);
      const names = byNs.get(e.metadata.namespace) ?? [];
      names.push(e.metadata.name);
      byNs.set(e.metadata.namespace, names);
    }
    for (const [ns, names] of byNs) {
      for (let i = 0; i < names.length; i += CHUNK) {
        const chunk = names.slice(i, i + CHUNK);
        /** @type {Promise<KeepaliveEvent[]>} */
        const events = all(nsPath(ns, 'events'), {
          fieldSelector: `check.name == keepalive && entity.name in (${chunk.join(', ')})`,
        });
        events
          .then((found) => {
            if (asked.current !== ask) return;
            setKnown((m) => {
              const next = new Map(m);
              for (const name of chunk) next.set(`${ns}/${name}`, null);
              for (const ev of found) if (ev.entity) next.set(keyOf(ev.entity), ev);
              return next;
            });
          })
          .catch(() => {
            if (asked.current !== ask) return;
            for (const name of chunk) ask.keys.delete(`${ns}/${name}`);
            setKnown((m) => {
              const next = new Map(m);
              for (const name of chunk) next.set(`${ns}/${name}`, false);
              return next;
            });
          });
      }
    }
  }, [entities, version]);

  return known;
}
