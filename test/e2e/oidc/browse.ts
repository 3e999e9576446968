/**
 * A browser's HTTP side for the OIDC suites: a cookie jar (tough-cookie) and redirects followed one at
 * a time, so a test can stop before a URL (the provider's login form, our callback) or rewrite it
 * (a tampered state, nonce, code or code challenge) as an attacker in the middle could.
 */
import { CookieJar } from 'tough-cookie';

interface Step {
  res: Response;
  /** The URL that answered `res`. */
  url: URL;
  /** A URL not fetched because `stopAt` matched it (then `res` is the answer that pointed to it). */
  stopped?: URL;
}

interface FollowOptions {
  method?: string;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  stopAt?: (u: URL) => boolean;
  rewrite?: (u: URL) => URL;
}

export class Browser {
  readonly jar = new CookieJar();

  async fetch(
    url: URL,
    init: {
      method?: string;
      form?: Record<string, string>;
      json?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) {
    const cookie = await this.jar.getCookieString(url.href);
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        ...(cookie ? { Cookie: cookie } : {}),
        ...(init.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    for (const c of res.headers.getSetCookie()) await this.jar.setCookie(c, url.href);
    return res;
  }

  /** Fetches `start` and follows its redirects (GET after the first) until an answer that is none. */
  async follow(start: URL, o: FollowOptions = {}): Promise<Step> {
    let url = o.rewrite ? o.rewrite(start) : start;
    let res = await this.fetch(url, { method: o.method, form: o.form, headers: o.headers });
    for (let hops = 0; hops < 20; hops++) {
      const location = res.headers.get('Location');
      if (res.status < 300 || res.status >= 400 || !location) return { res, url };
      let next = new URL(location, url);
      if (o.rewrite) next = o.rewrite(next);
      if (o.stopAt?.(next)) return { res, url, stopped: next };
      await res.body?.cancel();
      url = next;
      res = await this.fetch(url, { headers: o.headers });
    }
    throw new Error(`too many redirects from ${start.href}`);
  }
}
