import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';

// The backend's flags for legacy clients (docs/compatibility.md#legacy-client): the instance-state
// endpoint the `cloudvm` integration asks before removing a client whose keepalive fails.

export const legacyClientFlags: FlagSpec[] = [
  {
    name: 'legacy-cloudvm-url',
    type: 'string',
    description:
      'instance-state endpoint of the cloudvm integration: GET <url>/<region>/<instance_id> answers {"state":"running"} (empty: off)',
    default: '',
  },
];

export const legacyClientConfigEntries = {
  'legacy-cloudvm-url': v.union([
    v.literal(''),
    v.pipe(v.string(), v.url('must be an http(s) URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL')),
  ]),
};
