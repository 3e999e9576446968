import { headers as natsHeaders, type MsgHdrs } from 'nats';

// Header maps as the runtime passes them around, and the two wire forms they are read from or
// written to. Kept apart from the connection so the KV store can use them without importing it.

export type Headers = Record<string, string>;

export const toHdrs = (h?: Headers): MsgHdrs | undefined => {
  if (!h) return undefined;
  const out = natsHeaders();
  for (const k in h) out.set(k, h[k]!);
  return out;
};

/** `NATS/1.0\r\nName: value\r\n...` as the stream's message API hands headers back (base64). */
export function parseHeaderBlock(b64: string | undefined): Headers {
  const out: Headers = {};
  if (!b64) return out;
  const lines = Buffer.from(b64, 'base64').toString('utf8').split('\r\n');
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
