import * as v from 'valibot';

// The configuration file of monitorctl (docs/cli.md#configuration-file): named contexts, each a
// backend's URL, the defaults of the commands run against it and its credentials, and the name of
// the current one. Read from the operator's home, so parsed here like any outside input.

/** The formats a context may keep as its default (docs/cli.md#output). */
export const OUTPUT_FORMATS = ['tabular', 'json', 'wrapped-json', 'yaml'] as const;

/** One of OUTPUT_FORMATS, or a `template=` or `jsonpath=` format with its text. */
export const OutputFormat = v.pipe(
  v.string(),
  v.check(
    (f) => (OUTPUT_FORMATS as readonly string[]).includes(f) || /^(template|jsonpath)=./s.test(f),
    `format must be one of ${OUTPUT_FORMATS.join(', ')}, template=TEXT or jsonpath=TEXT`,
  ),
);

const HttpUrl = v.pipe(
  v.string(),
  v.url('url must be a URL such as http://127.0.0.1:8080'),
  v.check((u) => /^https?:\/\//i.test(u), 'url must start with http:// or https://'),
);

const ContextName = v.pipe(
  v.string(),
  v.minLength(1, 'a context name must not be empty'),
  v.regex(/^[\w.\-:@]+$/, 'a context name may only hold letters, digits, "_", ".", "-", ":" and "@"'),
);

export const CliContext = v.object({
  url: HttpUrl,
  namespace: v.optional(v.pipe(v.string(), v.minLength(1)), 'default'),
  format: v.optional(OutputFormat, 'tabular'),
  /** Seconds a request may take. */
  timeout: v.optional(v.pipe(v.number(), v.minValue(0.001, 'timeout must be positive'))),
  trusted_ca_file: v.optional(v.string()),
  insecure_skip_tls_verify: v.optional(v.boolean(), false),
  /** Who logged in with a password (shown by `config view`); the password itself is never kept. */
  username: v.optional(v.string()),
  api_key: v.optional(v.string()),
  access_token: v.optional(v.string()),
  refresh_token: v.optional(v.string()),
  /** Unix seconds the access token expires at, as `/auth` answered. */
  expires_at: v.optional(v.number()),
});
export type CliContext = v.InferOutput<typeof CliContext>;

export const CliConfigFile = v.object({
  current_context: v.optional(ContextName),
  contexts: v.optional(v.record(ContextName, CliContext), {}),
});
export type CliConfigFile = v.InferOutput<typeof CliConfigFile>;

/** What `GET /auth` and `POST /auth/token` answer. */
export const TokenAnswer = v.object({
  access_token: v.pipe(v.string(), v.minLength(1)),
  expires_at: v.number(),
  refresh_token: v.pipe(v.string(), v.minLength(1)),
});
export type TokenAnswer = v.InferOutput<typeof TokenAnswer>;
