// The `env` secrets provider (docs/compatibility.md#secrets): a resource's `secrets: [{name, secret}]`
// puts the value of the backend's environment variable `secret` into the command's variable `name`.
// Values are read when a command is about to run (or a check request is about to be sent) and kept
// nowhere: not stored, not logged, not in API answers or events. Errors name the secret and the
// variable, never a value.

export interface SecretRef {
  name: string;
  secret: string;
}

type Resolved = { ok: true; values: Record<string, string> } | { ok: false; errors: string[] };

/** The provider Sensu ships built in; the only one we have. */
const ENV_PROVIDER = 'env';

/**
 * Variables of the backend's own configuration: never handed out, since they may hold the
 * credentials of etcd, NATS or the agent port, and anyone allowed to write a handler could read them.
 */
const FORBIDDEN = /^MONITOR_/;
/** A name a shell and `env` accept as a variable. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function resolveEnvSecrets(
  refs: readonly SecretRef[] | null | undefined,
  env: NodeJS.ProcessEnv,
): Resolved {
  const values: Record<string, string> = {};
  const errors: string[] = [];
  for (const { name, secret } of refs ?? []) {
    if (!VARIABLE.test(name)) errors.push(`secret ${JSON.stringify(name)}: the name is not a variable name`);
    else if (FORBIDDEN.test(secret))
      errors.push(
        `secret ${name}: the ${ENV_PROVIDER} provider does not hand out the backend's own configuration (${secret})`,
      );
    else if (env[secret] === undefined)
      errors.push(`secret ${name}: the ${ENV_PROVIDER} provider has no variable ${secret} on this backend`);
    else values[name] = env[secret];
  }
  return errors.length ? { ok: false, errors } : { ok: true, values };
}

/** Every occurrence of the values in `text` replaced, for output that goes to logs or error messages. */
export function maskSecrets(text: string, values: readonly string[]): string {
  let out = text;
  // Longest first, so a value holding another is masked whole; short values would mask everything.
  for (const val of [...values].sort((a, b) => b.length - a.length))
    if (val.length >= 4) out = out.split(val).join('REDACTED');
  return out;
}
