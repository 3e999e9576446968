import type { AuthProvider } from '../../proto/schemas/resources/authproviders.ts';
import type { Subject } from './rbac.ts';

/** Directory login through an LDAP or AD provider (implemented with ldapts). */
export async function directoryLogin(_provider: AuthProvider, _username: string, _password: string): Promise<Subject | undefined> {
  return undefined;
}
