import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';

// The backend's flags of the legacy API on port 4567 (docs/compatibility.md#legacy-api): where it
// listens, its own Basic credentials, its CORS headers and the namespace it is a view of.

export const legacyApiFlags: FlagSpec[] = [
  {
    name: 'legacy-api-host',
    type: 'string',
    description: 'address the legacy API listens on',
    default: '[::]',
  },
  {
    name: 'legacy-api-port',
    type: 'int',
    description: 'port of the legacy API (0: not served)',
    default: 4567,
  },
  {
    name: 'legacy-api-user',
    type: 'string',
    description: 'user of the legacy API (with --legacy-api-password: Basic auth on every route)',
    default: '',
  },
  {
    name: 'legacy-api-password',
    type: 'string',
    description: 'password of --legacy-api-user',
    default: '',
  },
  {
    name: 'legacy-api-cors',
    type: 'string',
    description:
      'CORS headers of the legacy API: "default", "off", or a map (JSON object or Key=value,...) of Access-Control-Allow-<Key> values',
    default: 'default',
  },
  {
    name: 'legacy-api-namespace',
    type: 'string',
    description: 'the namespace whose entities, events, checks and silences the legacy API shows',
    default: 'default',
  },
];

/** The default headers, as the legacy API sent them when it had no `cors` setting. */
const DEFAULT_LEGACY_CORS: Readonly<Record<string, string>> = {
  Origin: '*',
  Methods: 'GET, POST, PUT, DELETE, OPTIONS',
  Credentials: 'true',
  Headers: 'Origin, X-Requested-With, Content-Type, Accept, Authorization',
};

/** `default` | `off` | a JSON object | `Key=value,...` → the header suffixes and values (none when off). */
const Cors = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const s = dataset.value.trim();
    if (s === '' || s === 'default') return { ...DEFAULT_LEGACY_CORS };
    if (s === 'off' || s === 'false') return {};
    let map: unknown;
    if (s.startsWith('{')) {
      try {
        map = JSON.parse(s);
      } catch {
        addIssue({ message: 'is not a JSON object' });
        return NEVER;
      }
    } else {
      const pairs = s.split(',').filter(Boolean);
      if (pairs.some((p) => p.indexOf('=') <= 0)) {
        addIssue({ message: 'must be "default", "off", a JSON object or Key=value pairs' });
        return NEVER;
      }
      map = Object.fromEntries(
        pairs.map((p) => [p.slice(0, p.indexOf('=')).trim(), p.slice(p.indexOf('=') + 1).trim()]),
      );
    }
    if (!map || typeof map !== 'object' || Array.isArray(map)) {
      addIssue({ message: 'must be a map of header names to values' });
      return NEVER;
    }
    const out: Record<string, string> = {};
    for (const [k, value] of Object.entries(map)) {
      if (!/^[A-Za-z0-9-]+$/.test(k) || /[\r\n]/.test(String(value))) {
        addIssue({ message: `"${k}" is not a header name suffix with a one-line value` });
        return NEVER;
      }
      out[k] = String(value);
    }
    return out;
  }),
);

const Port = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(0, 'must be a port number (0: not served)'),
  v.maxValue(65535, 'must be a port number'),
);

export const legacyApiConfigEntries = {
  'legacy-api-host': v.string(),
  'legacy-api-port': Port,
  'legacy-api-user': v.string(),
  'legacy-api-password': v.string(),
  'legacy-api-cors': Cors,
  'legacy-api-namespace': v.pipe(v.string(), v.regex(/^[\w.-]+$/, 'must be a namespace name')),
};
