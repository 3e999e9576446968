import type { MiddlewareHandler } from 'hono';
import { sendError } from '../errors.ts';

/** How much of a refused body is still read so the client sees the 413 instead of a reset connection. */
const DRAIN_BYTES = 64 * 1024 * 1024;
const DRAIN_MS = 5000;

/**
 * Refuses request bodies over `maxSize` with 413 and a JSON error. Unlike a limit that answers and
 * stops reading, the rest of the refused body is read and discarded first (within a cap), so the
 * client is not cut off mid-upload and the keep-alive connection stays usable; past the cap the
 * answer says `Connection: close`.
 */
export function limitBody(maxSize: number): MiddlewareHandler {
  return async (c, next) => {
    // Headers first: touching the body builds a web stream around the request, which costs more
    // than most requests' whole handling. Only chunked or oversized bodies are read here.
    const declared = c.req.header('content-length');
    const chunked = c.req.header('transfer-encoding') !== undefined;
    if (!chunked && (declared === undefined || Number(declared) <= maxSize)) return next();
    const body = c.req.raw.body;
    if (!body) return next();

    const reader = body.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    let tooBig = declared !== undefined && !chunked && Number(declared) > maxSize;
    const deadline = Date.now() + DRAIN_MS;
    let drained = true;
    for (;;) {
      if (tooBig && (size > DRAIN_BYTES || Date.now() > deadline)) {
        drained = false;
        void reader.cancel().catch(() => {});
        break;
      }
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxSize) tooBig = true;
      if (!tooBig) parts.push(value);
    }
    if (tooBig) {
      if (!drained) c.header('Connection', 'close');
      return sendError(c, 'payload_too_large', `the request body is larger than ${maxSize} bytes`);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(parts) });
    return next();
  };
}
