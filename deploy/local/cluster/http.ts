/** Small HTTP helpers for `up` and `status`: one call with a timeout, never throwing. */

const CALL_TIMEOUT_MS = 2000;

interface Answer {
  status: number;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: unknown;
}

/** GET (or POST with `body`) `url`; undefined when nothing answered within the timeout. */
export async function call(
  url: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<Answer | undefined> {
  try {
    const res = await fetch(url, {
      method: opts.body === undefined ? 'GET' : 'POST',
      headers: opts.headers,
      body: opts.body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  } catch {
    return undefined;
  }
}
