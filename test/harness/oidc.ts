/**
 * A real OpenID Provider process for the OIDC login suites (test/fixtures/oidc-provider.ts, built on
 * the `oidc-provider` library) on a free loopback port: issuer `http://127.0.0.1:<port>`, one
 * client registered for the given redirect URIs, users alice (ops, dev), bob (dev), carol (none).
 */
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { Proc } from './proc.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/oidc-provider.ts', import.meta.url));

export const OIDC_CLIENT = { id: 'monitor-test', secret: 'monitor-test-client-secret' } as const;
export const OIDC_USERS = {
  alice: 'alice-pw',
  bob: 'bob-pw',
  carol: 'carol-pw',
} as const;

export interface OidcServer {
  issuer: string;
  proc: Proc;
  stop(): Promise<void>;
}

export async function startOidcProvider(redirectUris: string[]): Promise<OidcServer> {
  const port = await freePort();
  const proc = Proc.start('oidc-provider', process.execPath, [
    '--import',
    'tsx',
    FIXTURE,
    String(port),
    ...redirectUris,
  ]);
  await proc.waitForLine((l) => l.startsWith('ready '), 30_000);
  return {
    issuer: `http://127.0.0.1:${port}`,
    proc,
    stop: async () => {
      await proc.stop();
    },
  };
}
