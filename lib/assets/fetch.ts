// Download of one asset archive to a file, hashing it on the way (SHA-512), with a size cap, an idle
// timeout and an overall deadline. Redirects are followed; headers (which may carry tokens) are only
// sent again when the redirect stays on the same origin.
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { AssetError } from './errors.ts';

const MAX_DOWNLOAD_BYTES = 1024 ** 3; // 1 GiB
const IDLE_TIMEOUT_MS = 30_000;
const TOTAL_TIMEOUT_MS = 10 * 60_000;
const MAX_REDIRECTS = 5;

interface FetchOptions {
  headers: Record<string, string>;
  /** PEM of extra trusted CAs, added to the system roots */
  ca?: string;
  /** size cap of the download; MAX_DOWNLOAD_BYTES unless given */
  maxBytes?: number;
}

interface Downloaded {
  sha512: string;
  bytes: number;
}

export async function download(
  what: string,
  url: string,
  dest: string,
  opts: FetchOptions,
): Promise<Downloaded> {
  let current = new URL(url);
  const origin = current.origin;
  for (let hop = 0; ; hop++) {
    const res = await request(what, current, current.origin === origin ? opts.headers : {}, opts.ca);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new AssetError(`fetching asset ${what}: too many redirects`);
      current = new URL(res.headers.location, current);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new AssetError(
        `fetching asset ${what}: ${current.origin}${current.pathname} answered HTTP ${status}`,
      );
    }
    const max = opts.maxBytes ?? MAX_DOWNLOAD_BYTES;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      res.destroy();
      throw new AssetError(`fetching asset ${what}: ${declared} bytes is above the ${max} byte limit`);
    }
    return save(what, res, dest, max);
  }
}

function request(
  what: string,
  url: URL,
  headers: Record<string, string>,
  ca: string | undefined,
): Promise<http.IncomingMessage> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new AssetError(`fetching asset ${what}: unsupported URL scheme ${url.protocol}`));
  }
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      method: 'GET',
      headers: { 'user-agent': 'monitor-agent', ...headers },
    };
    if (url.protocol === 'https:' && ca) options.ca = [...tls.rootCertificates, ca];
    const req = (url.protocol === 'https:' ? https : http).request(url, options, resolve);
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (err) => reject(new AssetError(`fetching asset ${what}: ${err.message}`)));
    req.end();
  });
}

function save(what: string, res: http.IncomingMessage, dest: string, max: number): Promise<Downloaded> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha512');
    const out = createWriteStream(dest, { mode: 0o600 });
    let bytes = 0;
    let failed = false;
    const fail = (msg: string) => {
      if (failed) return;
      failed = true;
      clearTimeout(deadline);
      res.destroy();
      out.destroy();
      reject(new AssetError(`fetching asset ${what}: ${msg}`));
    };
    const deadline = setTimeout(() => fail('download took longer than 10 minutes'), TOTAL_TIMEOUT_MS);
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > max) return fail(`download is above the ${max} byte limit`);
      hash.update(chunk);
      if (!out.write(chunk)) {
        res.pause();
        out.once('drain', () => res.resume());
      }
    });
    res.on('error', (err) => fail(err.message));
    res.on('aborted', () => fail('connection closed during the download'));
    out.on('error', (err) => fail(`writing ${dest}: ${err.message}`));
    res.on('end', () => {
      if (failed) return;
      out.end(() => {
        if (failed) return;
        clearTimeout(deadline);
        resolve({ sha512: hash.digest('hex'), bytes });
      });
    });
  });
}
