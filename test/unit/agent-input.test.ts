import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePayload } from '../../agent/sockets/payload.ts';
import { parseApiEvent } from '../../agent/api/server.ts';
import { routeAgentEvent } from '../../gateway/agents/event-route.ts';

// Local inputs at the edge: socket payloads become core/v2 events, API bodies are parsed once, and
// the backend routes an agent's event to its own entity, a proxy entity, or acknowledges metrics.

const origin = { namespace: 'ns1', name: 'agent1', user: 'agent' };

test('socket payload: a legacy result becomes a check event; unknown attributes are dropped', () => {
  const p = parsePayload(
    Buffer.from(
      JSON.stringify({
        name: 'disk',
        status: 2,
        output: 'full',
        source: 'db1',
        handler: 'mail',
        extra: 1,
        ttl: 9,
      }),
    ),
  );
  assert.is(p.kind, 'event');
  if (p.kind !== 'event') return;
  assert.equal(p.event, {
    check: {
      metadata: { name: 'disk' },
      status: 2,
      output: 'full',
      handlers: ['mail'],
      proxy_entity_name: 'db1',
    },
  });
  const c = parsePayload(
    Buffer.from('{"name":"x","status":0,"output":"","client":"old","handlers":["a"],"handler":"b"}'),
  );
  assert.equal(c.kind === 'event' && c.event.check, {
    metadata: { name: 'x' },
    status: 0,
    output: '',
    handlers: ['a'],
    proxy_entity_name: 'old',
  });
});

test('socket payload: ping, incomplete and invalid', () => {
  assert.equal(parsePayload(Buffer.from('  ping\r\n')), { kind: 'ping' });
  assert.equal(parsePayload(Buffer.from('{"name":')), { kind: 'incomplete' });
  assert.equal(parsePayload(Buffer.from('')), { kind: 'incomplete' });
  const bad = parsePayload(Buffer.from('{"name":"x","status":"1","output":"o"}'));
  assert.is(bad.kind, 'invalid');
  assert.match(bad.kind === 'invalid' ? bad.reason : '', /status/);
  assert.is(parsePayload(Buffer.from('"just a string"')).kind, 'invalid');
});

test('API body: parsed once; errors name the field', () => {
  const ev = parseApiEvent(
    Buffer.from('{"check":{"metadata":{"name":"c1"},"status":1,"custom":"kept"},"unknown":1}'),
  );
  assert.is(ev.check?.metadata.name, 'c1');
  assert.is((ev.check as Record<string, unknown>).custom, 'kept', 'check fields pass through');
  assert.is((ev as Record<string, unknown>).unknown, undefined);
  assert.throws(() => parseApiEvent(Buffer.from('{')), /malformed JSON/);
  assert.throws(() => parseApiEvent(Buffer.from('{"check":{"metadata":{}}}')), /check\.metadata\.name/);
  assert.throws(
    () => parseApiEvent(Buffer.from('{"check":{"metadata":{"name":"c"},"interval":-1}}')),
    /check\.interval/,
  );
});

test('backend routing: own entity, proxy entity, metrics-only, invalid', () => {
  const own = routeAgentEvent({ check: { metadata: { name: 'c' } } }, origin);
  assert.equal(own.kind === 'store' && own.actorId, 'ns1/agent1');
  const self = routeAgentEvent(
    { check: { metadata: { name: 'c' }, proxy_entity_name: 'agent1' } as never },
    origin,
  );
  assert.equal(self.kind === 'store' && self.actorId, 'ns1/agent1');
  const proxy = routeAgentEvent(
    {
      entity: { metadata: { name: 'agent1' }, entity_class: 'agent' },
      check: { metadata: { name: 'c' }, proxy_entity_name: 'router' } as never,
    },
    origin,
  );
  assert.is(proxy.kind, 'store');
  if (proxy.kind === 'store') {
    assert.is(proxy.actorId, 'ns1/router');
    assert.is(proxy.msg.source, 'api');
    assert.equal(proxy.msg.event.entity, {
      metadata: { name: 'router', namespace: 'ns1' },
      entity_class: 'proxy',
    });
  }
  const metrics = routeAgentEvent({ metrics: { handlers: ['h'], points: [{}, {}] } }, origin);
  assert.equal(metrics, { kind: 'metrics-only', summary: { points: 2, handlers: ['h'] } });
  assert.is(routeAgentEvent({}, origin).kind, 'invalid');
  assert.is(
    routeAgentEvent({ check: { metadata: { name: 'c' }, proxy_entity_name: 'bad name' } as never }, origin)
      .kind,
    'invalid',
  );
  assert.is(
    routeAgentEvent({ check: { metadata: { name: 'keepalive' }, proxy_entity_name: 'p' } as never }, origin)
      .kind,
    'invalid',
  );
});

test.run();
