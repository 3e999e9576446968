// suite-timeout: 240
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import * as v from 'valibot';
import { CONFIG_RESOURCES } from '../../gateway/api/resources.ts';
import { Entity } from '../../proto/schemas/entity.ts';
import { Event } from '../../proto/schemas/event.ts';
import { ApiEvent, SocketEvent } from '../../proto/schemas/agent-input.ts';
import { Namespace, User, ApiKey } from '../../proto/schemas/resources/users.ts';
import { fuzz, jsonValue, mutated } from '../harness/fuzz.ts';
import { sandboxReady } from '../../lib/sandbox/index.ts';

// Fuzzing the valibot schema of every resource kind in-process (issue 13): 10,000 cases each, half
// arbitrary JSON values, half mutations of a valid body. A schema answers with a validation result,
// never an exception; a result it accepts is an object.

// The schemas of assets, checks, filters and mutators compile their JavaScript in the sandbox, which each
// program loads as it starts.
await sandboxReady();

const RUNS = 10_000;
const meta = (name: string) => ({ name, namespace: 'default', labels: { a: 'b' }, annotations: { c: 'd' } });
const SHA = 'a'.repeat(128);

const VALID: Record<string, unknown> = {
  assets: { metadata: meta('asset'), url: 'https://example.com/a.tar.gz', sha512: SHA, filters: ['x'] },
  checks: { metadata: meta('check'), command: 'true', interval: 60, subscriptions: ['linux'], cron: '' },
  filters: { metadata: meta('filter'), action: 'allow', expressions: ['event.check.status == 0'] },
  handlers: { metadata: meta('handler'), type: 'tcp', socket: { host: 'localhost', port: 1 } },
  hooks: { metadata: meta('hook'), command: 'true', timeout: 10 },
  mutators: { metadata: meta('mutator'), type: 'pipe', command: 'cat' },
  pipelines: {
    metadata: meta('pipeline'),
    workflows: [{ name: 'w', handler: { name: 'h', type: 'Handler', api_version: 'core/v2' } }],
  },
  roles: { metadata: meta('role'), rules: [{ verbs: ['get'], resources: ['checks'] }] },
  rolebindings: {
    metadata: meta('rb'),
    role_ref: { type: 'Role', name: 'role' },
    subjects: [{ type: 'User', name: 'u' }],
  },
  silenced: { metadata: meta('linux:disk'), subscription: 'linux', check: 'disk', expire: 60 },
  clusterroles: { metadata: { name: 'cr' }, rules: [{ verbs: ['get'], resources: ['checks'] }] },
  clusterrolebindings: {
    metadata: { name: 'crb' },
    role_ref: { type: 'ClusterRole', name: 'cr' },
    subjects: [{ type: 'Group', name: 'g' }],
  },
};

const entity = { metadata: meta('web-01'), entity_class: 'proxy', subscriptions: ['linux'] };
const check = { metadata: meta('disk'), command: 'true', status: 1, output: 'x', interval: 60 };
const SCHEMAS: Array<[string, v.GenericSchema, unknown]> = [
  ...CONFIG_RESOURCES.map((r): [string, v.GenericSchema, unknown] => [r.plural, r.schema, VALID[r.plural]]),
  ['entities', Entity, entity],
  ['events', Event, { entity, check, timestamp: 1 }],
  ['agent API events', ApiEvent, { check }],
  ['agent socket events', SocketEvent, { name: 'disk', output: 'x', status: 1 }],
  ['namespaces', Namespace, { name: 'ns' }],
  ['users', User, { username: 'u', password: 'p4ssw0rd!', groups: ['g'] }],
  ['apikeys', ApiKey, { username: 'u' }],
];

test('every resource kind has a valid sample for its mutations', () => {
  for (const [kind, schema, valid] of SCHEMAS) {
    assert.ok(valid !== undefined, `a valid ${kind} sample`);
    const r = v.safeParse(schema, valid);
    assert.ok(
      r.success,
      `the ${kind} sample is valid: ${r.success ? '' : JSON.stringify(r.issues[0]?.message)}`,
    );
  }
});

for (const [kind, schema, valid] of SCHEMAS) {
  test(`schema of ${kind}: ${RUNS.toLocaleString('en')} arbitrary and mutated bodies give a validation result`, async () => {
    await fuzz(
      `schema ${kind}`,
      fc.property(fc.oneof(jsonValue(), mutated(valid)), (body) => {
        const r = v.safeParse(schema, body);
        if (r.success) assert.type(r.output, 'object');
        else assert.ok(r.issues.length > 0 && typeof r.issues[0]!.message === 'string');
      }),
      RUNS,
    );
  });
}

test.run();
