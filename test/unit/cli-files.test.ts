import * as assert from 'uvu/assert';
import { test } from 'uvu';
import {
  documentsOf,
  isProblem,
  resourceOf,
  splitJsonStream,
  type FileResource,
} from '../../cli/files/documents.ts';
import { canonical, dumpForm, sameResource } from '../../cli/files/normalize.ts';
import { dumpTypes } from '../../cli/commands/dump.ts';

// The pure parts of monitorctl's file commands: documents of YAML and JSON streams, resources of
// documents (namespace, mark, paths), comparison with the server's copy, and the form of a dump.

const check = (name: string) => ({
  type: 'CheckConfig',
  api_version: 'core/v2',
  metadata: { name },
  spec: { command: 'true' },
});

test('splitJsonStream splits concatenated objects and ignores braces inside strings', () => {
  assert.equal(splitJsonStream('{"a": "}{"}\n{"b": [1, {"c": 2}]}'), ['{"a": "}{"}', '{"b": [1, {"c": 2}]}']);
  assert.throws(() => splitJsonStream('{"a": 1'), /middle/);
});

test('documentsOf reads YAML documents, JSON streams, arrays, and YAML that starts with a brace', () => {
  assert.is(documentsOf('f', '---\na: 1\n---\nb: 2\n').length, 2);
  assert.is(documentsOf('f', `${JSON.stringify(check('a'))}${JSON.stringify(check('b'))}`).length, 2);
  assert.is(documentsOf('f', JSON.stringify([check('a'), check('b'), check('c')])).length, 3);
  const docs = documentsOf('f', `${JSON.stringify(check('a'))}\n---\n${JSON.stringify(check('b'))}`);
  assert.equal(
    docs.map((d) => d.index),
    [1, 2],
  );
  const bad = documentsOf('f', 'a: [1\n');
  assert.ok('error' in bad[0]! && /not YAML/.test(bad[0].error));
});

test('resourceOf places the namespace, marks what create -f writes, and names the path', () => {
  const [doc] = documentsOf('f', JSON.stringify(check('web')));
  const r = resourceOf(doc!, { namespace: 'ops', mark: true }) as FileResource;
  assert.not.ok(isProblem(r));
  assert.is(r.path, '/api/core/v2/namespaces/ops/checks/web');
  assert.equal(r.body, {
    command: 'true',
    metadata: { name: 'web', namespace: 'ops', labels: { 'monitorctl/managed-by': 'monitorctl' } },
  });
  const [ns] = documentsOf('f', 'type: Namespace\nmetadata: {}\nspec: {name: ops}\n');
  const n = resourceOf(ns!, { namespace: 'x', mark: true }) as FileResource;
  assert.is(n.path, '/api/core/v2/namespaces/ops');
  assert.equal(n.body, { name: 'ops' });
  const [unknown] = documentsOf('f', 'type: Gadget\nmetadata: {name: g}\nspec: {}\n');
  assert.equal(resourceOf(unknown!, { namespace: 'x', mark: false }), {
    source: 'f',
    index: 1,
    what: 'Gadget "g"',
    message: 'unknown type Gadget',
  });
  const [noSpec] = documentsOf('f', 'type: CheckConfig\nmetadata: {name: g}\n');
  assert.match((resourceOf(noSpec!, { namespace: 'x', mark: false }) as { message: string }).message, /spec/);
});

test('sameResource ignores created_by, empty values and fields the file leaves out', () => {
  const want = { command: 'true', metadata: { name: 'a' } };
  assert.ok(
    sameResource(want, {
      command: 'true',
      publish: false,
      timeout: 30,
      metadata: { name: 'a', created_by: 'admin' },
    }),
  );
  assert.not.ok(sameResource(want, { command: 'false', metadata: { name: 'a' } }));
  assert.not.ok(sameResource({ subscriptions: ['a'] }, { subscriptions: ['a', 'b'] }));
});

test('dumpForm: wrapped keys first, sorted within, no created_by nor managed-by label', () => {
  const out = dumpForm({
    spec: { b: 1, a: { d: 1, c: 2 } },
    metadata: { name: 'x', created_by: 'admin', labels: { 'monitorctl/managed-by': 'monitorctl' } },
    api_version: 'core/v2',
    type: 'CheckConfig',
  });
  assert.equal(
    JSON.stringify(out),
    '{"type":"CheckConfig","api_version":"core/v2","metadata":{"name":"x"},"spec":{"a":{"c":2,"d":1},"b":1}}',
  );
  assert.equal(canonical({ b: [], a: { x: 0 } }), {});
});

test('dumpTypes: all in restore order without state; --omit; API keys refused', () => {
  const all = dumpTypes('all', undefined).map((t) => t.plural);
  assert.is(all[0], 'namespaces');
  assert.ok(all.indexOf('handlers') < all.indexOf('checks'));
  assert.not.ok(all.includes('events') || all.includes('entities') || all.includes('api-keys'));
  assert.equal(
    dumpTypes('checks,namespaces,events', 'events').map((t) => t.plural),
    ['namespaces', 'checks'],
  );
  assert.throws(() => dumpTypes('apikeys', undefined), /API keys/);
});

test.run();
