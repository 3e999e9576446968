import * as v from 'valibot';
import { StringMap } from './common.ts';

// One resource of a file that monitorctl create -f, delete -f and prune read (docs/cli.md#files):
// the wrapped form `{type, api_version, metadata, spec}` of Sensu's dumps. What the spec holds is
// the API's business (it validates each kind); here only the envelope is checked, at the edge.

const Text = v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'));

const WrappedMetadata = v.looseObject({
  name: v.optional(v.string('metadata.name must be a string')),
  namespace: v.optional(v.string('metadata.namespace must be a string')),
  labels: v.optional(v.nullable(StringMap)),
  annotations: v.optional(v.nullable(StringMap)),
});

export const WrappedResource = v.object({
  type: Text,
  api_version: v.optional(Text),
  metadata: v.optional(v.nullable(WrappedMetadata)),
  spec: v.record(v.string(), v.unknown(), 'spec must be an object'),
});
