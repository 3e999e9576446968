import * as v from 'valibot';
import { Meta } from './meta.ts';
import { jsSources, type JsSyntaxCheck } from './javascript.ts';

const Sha512 = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{128}$/, 'sha512 must be 128 hexadecimal characters'));
const Url = v.pipe(v.string(), v.url('url must be a URL'));
const Headers = v.optional(v.nullable(v.record(v.string(), v.string())));

/**
 * core/v2 Asset: one URL, or several builds chosen by their filters (scripts over `entity`); with
 * `js`, the filters must compile (./javascript.ts).
 */
export const assetSchema = (js?: JsSyntaxCheck) =>
  v.pipe(
    v.object({
      metadata: Meta,
      url: v.optional(Url),
      sha512: v.optional(Sha512),
      filters: jsSources('script', js),
      headers: Headers,
      builds: v.optional(
        v.nullable(
          v.array(v.object({ url: Url, sha512: Sha512, filters: jsSources('script', js), headers: Headers })),
        ),
      ),
    }),
    v.check(
      (a) => (a.builds?.length ?? 0) > 0 || (!!a.url && !!a.sha512),
      'an asset needs url and sha512, or builds',
    ),
  );
export const Asset = assetSchema();
