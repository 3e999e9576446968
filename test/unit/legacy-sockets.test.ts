import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  HELP,
  authorized,
  isJsonType,
  needsAuth,
  routeRequest,
  wantsRaw,
  wrongMethodText,
} from '../../agent/legacy/sockets/http-routes.ts';
import { redactSettings } from '../../agent/legacy/sockets/http.ts';
import { prepareResults, readBuffer } from '../../agent/legacy/sockets/results.ts';
import { legacySettings } from '../../proto/legacy/client-definition.ts';

// The pure parts of the legacy client's sockets: what a TCP buffer holds, the results a message
// becomes, and the HTTP socket's routing, credentials and texts.

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

test('a buffer is ping (trimmed), incomplete JSON, or a document', () => {
  assert.equal(readBuffer('ping'), { kind: 'ping' });
  assert.equal(readBuffer(' ping\r\n'), { kind: 'ping' });
  assert.equal(readBuffer('{"name":"x",'), { kind: 'incomplete' });
  assert.equal(readBuffer('pin'), { kind: 'incomplete' });
  assert.equal(readBuffer('{"a":1} trailing'), { kind: 'incomplete' });
  assert.equal(readBuffer('[{"a":1}]'), { kind: 'document', doc: [{ a: 1 }] });
});

test('a result becomes an event: source as the proxy entity, executed kept, signature left to the agent', () => {
  const now = new Date(1_700_000_100_000);
  const p = prepareResults(
    { name: 'disk', output: 'full', status: 2, executed: 1_700_000_000, source: 'router-1', handler: 'mail' },
    now,
  );
  assert.ok(p.ok);
  if (!p.ok) return;
  const [e] = p.events;
  assert.is(p.events.length, 1);
  assert.is(e!.check!.metadata.name, 'disk');
  assert.is(e!.check!.status, 2);
  assert.is(e!.check!.output, 'full');
  assert.is(e!.check!.executed, 1_700_000_000);
  assert.is(e!.check!.issued, 1_700_000_100);
  assert.equal(e!.check!.handlers, ['mail']);
  assert.is((e!.check as Record<string, unknown>).proxy_entity_name, 'router-1');
  assert.is(e!.signature, undefined, 'the agent adds the signature to every event');
  const plain = prepareResults({ name: 'x', output: 'y' });
  assert.ok(plain.ok && plain.events[0]!.check!.status === 0);
  assert.is(
    (plain.ok && (plain.events[0]!.check as Record<string, unknown>).proxy_entity_name) || undefined,
    undefined,
  );
});

test('an array is several results; one invalid element refuses the whole message, naming its index', () => {
  const good = { name: 'a', output: 'o' };
  const many = prepareResults([good, { ...good, name: 'b' }]);
  assert.ok(many.ok && many.events.length === 2);
  assert.equal(prepareResults([good, { name: 'bad name', output: 'o' }, good]), {
    ok: false,
    message: 'check name cannot contain spaces or special characters',
    index: 1,
  });
  assert.equal(prepareResults([]), { ok: true, events: [] });
});

test('validation messages are the legacy rules, in their order; an empty or tokenised source is refused', () => {
  const msg = (doc: unknown) => {
    const p = prepareResults(doc);
    return p.ok ? 'ok' : p.message;
  };
  assert.is(msg({}), 'check output must be a string');
  assert.is(msg({ output: 'o', status: 1.5 }), 'check status must be an integer');
  assert.is(msg({ output: 'o', executed: 'now' }), 'check executed timestamp must be an integer');
  assert.is(msg({ output: 'o' }), 'check name must be a string');
  assert.is(
    msg({ name: 'x', output: 'o', source: '' }),
    'check source cannot contain spaces, special characters, or invalid tokens',
  );
  assert.is(
    msg({ name: 'x', output: 'o', source: ':::name:::' }),
    'check source cannot contain unsubstituted tokens',
  );
  assert.is(msg({ name: 'x', output: 'o', ttl: 0 }), 'check ttl must be greater than 0');
  assert.is(
    msg({ name: 'x', output: 'o', interval: 'often' }),
    'check result has an attribute of the wrong type for a check',
  );
  assert.is(msg('text'), 'check result must be an object');
  assert.is(msg(null), 'check result must be an object');
  assert.is(msg([3]), 'check result must be an object');
});

test('routing is by exact path, the query apart; a known path with another method is 405', () => {
  assert.equal(routeRequest('GET', '/info'), { kind: 'endpoint', endpoint: '/info', query: '' });
  assert.equal(routeRequest('GET', '/settings?redacted=false'), {
    kind: 'endpoint',
    endpoint: '/settings',
    query: 'redacted=false',
  });
  assert.equal(routeRequest('POST', '/info'), { kind: 'wrong-method', allowed: ['GET'] });
  assert.equal(routeRequest('GET', '/results'), { kind: 'wrong-method', allowed: ['POST'] });
  assert.equal(routeRequest('HEAD', '/brew'), { kind: 'wrong-method', allowed: ['GET'] });
  assert.equal(routeRequest('GET', '/info/'), { kind: 'not-found' });
  assert.equal(routeRequest('GET', '/constructor'), { kind: 'not-found' });
  assert.is(wrongMethodText(['GET']), 'Valid methods for this endpoint: ["GET"]');
});

test('the 404 help body is the legacy one, byte for byte', () => {
  assert.is(
    JSON.stringify(HELP),
    '{"endpoints":{"/info":{"help":"Sensu client information","methods":["GET"]},' +
      '"/results":{"help":"Send check JSON results here","methods":["POST"]},' +
      '"/settings":{"help":"Get redacted Sensu settings (requires basic auth). Use ?redacted=false if you want the setting unredacted.","methods":["GET"]},' +
      '"/brew":{"help":"Ask Sensu to brew a cup of joe (try it!)","methods":["GET"]}}}',
  );
});

test('/settings always needs credentials, /info and /results only when all are protected, /brew never', () => {
  assert.ok(needsAuth('/settings', false));
  assert.not.ok(needsAuth('/info', false));
  assert.not.ok(needsAuth('/results', false));
  assert.ok(needsAuth('/info', true));
  assert.ok(needsAuth('/results', true));
  assert.not.ok(needsAuth('/brew', true));
});

test('Basic credentials: both must match; none configured matches nothing; a password may hold colons', () => {
  assert.ok(authorized(basic('u:p'), 'u', 'p'));
  assert.ok(authorized(basic('u:a:b'), 'u', 'a:b'));
  assert.not.ok(authorized(basic('u:q'), 'u', 'p'));
  assert.not.ok(authorized(basic('v:p'), 'u', 'p'));
  assert.not.ok(authorized(basic('up'), 'u', 'p'));
  assert.not.ok(authorized(undefined, 'u', 'p'));
  assert.not.ok(authorized('Bearer x', 'u', 'p'));
  assert.not.ok(authorized(basic(':'), undefined, undefined));
  assert.not.ok(authorized(basic('u:'), 'u', undefined));
});

test('redacted=false asks for raw settings, in any case; anything else does not', () => {
  assert.ok(wantsRaw('redacted=false'));
  assert.ok(wantsRaw('a=1&REDACTED=False'));
  assert.not.ok(wantsRaw(''));
  assert.not.ok(wantsRaw('redacted=true'));
  assert.not.ok(wantsRaw('redacted=falsey'));
  assert.not.ok(wantsRaw('unredacted=false'));
});

test('a JSON content type is any naming application/json', () => {
  assert.ok(isJsonType('application/json'));
  assert.ok(isJsonType('Application/JSON; charset=utf-8'));
  assert.not.ok(isJsonType('text/plain'));
  assert.not.ok(isJsonType(undefined));
});

test('settings are redacted with the client redact list, else the legacy default list, and the signature hidden', () => {
  const settings = (redact?: string[]) => {
    const r = legacySettings({
      client: {
        name: 'c',
        address: 'a',
        subscriptions: [],
        signature: 's3cret',
        ...(redact ? { redact } : {}),
        http_socket: { user: 'u', password: 'pw' },
        webhook_url: 'https://hook',
        nested: { api_key: 'k', token_like: 'kept' },
      },
    });
    if (!r.ok) throw new Error(r.message);
    return r.settings;
  };
  const byDefault = redactSettings(settings()) as any;
  assert.is(byDefault.client.http_socket.password, 'REDACTED');
  assert.is(byDefault.client.webhook_url, 'REDACTED', 'a legacy-only default');
  assert.is(byDefault.client.nested.api_key, 'REDACTED');
  assert.is(byDefault.client.nested.token_like, 'kept');
  assert.is(byDefault.client.signature, 'REDACTED');
  const own = redactSettings(settings(['token_like'])) as any;
  assert.is(own.client.nested.token_like, 'REDACTED');
  assert.is(own.client.http_socket.password, 'pw', 'the client list replaces the defaults');
});

test.run();
