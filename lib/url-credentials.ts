// Credentials written into server URLs (`nats://user:pass@host:4222`, `http://user:pass@host:2379`):
// taken out of the URL for the clients, which ignore them there, and hidden wherever a URL may be
// shown (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

/** A URL without its user info, and what the user info held (percent-decoded). */
export interface SplitUrl {
  url: string;
  /** The part before `:`; alone (no `:`) it is what NATS calls a token. */
  user?: string;
  password?: string;
}

// scheme://userinfo@rest; the user info ends at the last `@` before the path, so a raw `@` in a
// password does not leave its tail in the URL. The scheme is optional: NATS accepts `host:port`.
const USERINFO = /^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?([^/?#]*)@(.*)$/s;

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Splits the user info off `raw`; a URL without any is returned as is. */
export function splitUrlCredentials(raw: string): SplitUrl {
  const m = USERINFO.exec(raw);
  if (!m) return { url: raw };
  const [, scheme = '', info = '', rest = ''] = m;
  const url = scheme + rest;
  const colon = info.indexOf(':');
  if (colon < 0) return { url, user: decode(info) };
  return { url, user: decode(info.slice(0, colon)), password: decode(info.slice(colon + 1)) };
}

// Any `scheme://userinfo@` inside a longer text (a log message, an error from a client library).
// Greedy up to the last `@` before a path, space or quote, for the same reason as above.
const USERINFO_IN_TEXT = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#"'<>]*@/g;

/** `text` with the user info of every URL in it replaced by `***`. */
export function scrubUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(USERINFO_IN_TEXT, '$1***@') : text;
}
