import { ActorError } from './types.ts';

// Replies of actor turns on the wire: `{"ok":true,"value":...}` or `{"ok":false,"code","message"}`.

export function encodeReply(r: { value?: unknown; error?: ActorError }): Uint8Array {
  const body = r.error
    ? { ok: false, code: r.error.code, message: r.error.message }
    : { ok: true, value: r.value };
  return Buffer.from(JSON.stringify(body));
}

export function decodeReply(data: Uint8Array): unknown {
  let parsed: { ok?: boolean; value?: unknown; code?: ActorError['code']; message?: string };
  try {
    parsed = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new ActorError('internal', 'malformed actor reply');
  }
  if (parsed.ok) return parsed.value;
  throw new ActorError(parsed.code ?? 'internal', parsed.message ?? 'actor error');
}
