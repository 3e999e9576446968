/**
 * A real OpenLDAP server (slapd) for directory-login tests, on a free loopback port with a
 * directory of its own:
 *
 *   dc=monitor,dc=test
 *     cn=admin    rootdn (password `admin-secret`, in slapd.conf)
 *     cn=binder   read-only service account (password `binder-secret`), the providers' binding user
 *     ou=people   alice, bob, carol (inetOrgPerson, so person too; `uid`; password `<name>-secret`)
 *     ou=groups   ops (groupOfNames: alice, bob), dev (alice)
 *
 * The data is loaded with `slapadd` before slapd starts (no ldap-utils needed); passwords in the LDIF
 * are `{SSHA}` hashes made with node:crypto. slapd runs with `-d 0`: any `-d` keeps it attached to
 * its parent (no fork), and level 0 prints nothing but fatal errors, so the harness `Proc` owns it.
 * Ready when an admin bind over TCP works.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'ldapts';
import { freePort } from './ports.ts';
import { findExecutable, Proc, sleep } from './proc.ts';
import { tempDir } from './tmp.ts';

export interface Slapd {
  /** ldap://127.0.0.1:<port> */
  url: string;
  port: number;
  /** dc=monitor,dc=test */
  baseDn: string;
  /** The read-only service account: cn=binder,dc=monitor,dc=test */
  bindDn: string;
  bindPassword: string;
  /** The rootdn, for tests that need to write. */
  adminDn: string;
  adminPassword: string;
  peopleDn: string;
  groupsDn: string;
  proc: Proc;
  stop(): Promise<void>;
}

const SLAPD_USERS = { alice: 'alice-secret', bob: 'bob-secret', carol: 'carol-secret' } as const;

const BASE_DN = 'dc=monitor,dc=test';
const ADMIN_DN = `cn=admin,${BASE_DN}`;
const ADMIN_PASSWORD = 'admin-secret';
const BINDER_DN = `cn=binder,${BASE_DN}`;
const BINDER_PASSWORD = 'binder-secret';
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIRS = ['/usr/lib/ldap', '/usr/lib/openldap', '/usr/lib64/openldap', '/usr/libexec/openldap'];

/** `{SSHA}` of a password: base64(sha1(password + salt) + salt). */
function sshaHash(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(password, 'utf8').update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}

function slapdConf(dir: string): string {
  const moduleDir = MODULE_DIRS.find(
    (d) => fs.existsSync(path.join(d, 'back_mdb.so')) || fs.existsSync(path.join(d, 'back_mdb.la')),
  );
  return [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`),
    ...(moduleDir ? [`modulepath ${moduleDir}`, 'moduleload back_mdb'] : []),
    `pidfile ${dir}/slapd.pid`,
    `argsfile ${dir}/slapd.args`,
    '',
    'database mdb',
    'maxsize 16777216',
    `suffix "${BASE_DN}"`,
    `rootdn "${ADMIN_DN}"`,
    `rootpw ${sshaHash(ADMIN_PASSWORD)}`,
    `directory ${dir}/data`,
    '',
    // Passwords: anyone may bind with them (auth), nobody may read them.
    'access to attrs=userPassword',
    '  by anonymous auth',
    '  by * none',
    // Everything else: the service account and the entries themselves may read.
    'access to *',
    `  by dn.exact="${BINDER_DN}" read`,
    '  by self read',
    '  by * none',
    '',
  ].join('\n');
}

function dataLdif(): string {
  const entries: string[][] = [
    [
      `dn: ${BASE_DN}`,
      'objectClass: top',
      'objectClass: dcObject',
      'objectClass: organization',
      'o: monitor',
      'dc: monitor',
    ],
    [
      `dn: ${BINDER_DN}`,
      'objectClass: organizationalRole',
      'objectClass: simpleSecurityObject',
      'cn: binder',
      `userPassword: ${sshaHash(BINDER_PASSWORD)}`,
    ],
    [`dn: ou=people,${BASE_DN}`, 'objectClass: organizationalUnit', 'ou: people'],
    [`dn: ou=groups,${BASE_DN}`, 'objectClass: organizationalUnit', 'ou: groups'],
    ...Object.entries(SLAPD_USERS).map(([uid, pw]) => [
      `dn: uid=${uid},ou=people,${BASE_DN}`,
      'objectClass: top',
      'objectClass: person',
      'objectClass: organizationalPerson',
      'objectClass: inetOrgPerson',
      `uid: ${uid}`,
      `cn: ${uid[0]!.toUpperCase()}${uid.slice(1)}`,
      `sn: ${uid}`,
      `mail: ${uid}@monitor.test`,
      `userPassword: ${sshaHash(pw)}`,
    ]),
    [
      `dn: cn=ops,ou=groups,${BASE_DN}`,
      'objectClass: groupOfNames',
      'cn: ops',
      `member: uid=alice,ou=people,${BASE_DN}`,
      `member: uid=bob,ou=people,${BASE_DN}`,
    ],
    [
      `dn: cn=dev,ou=groups,${BASE_DN}`,
      'objectClass: groupOfNames',
      'cn: dev',
      `member: uid=alice,ou=people,${BASE_DN}`,
    ],
  ];
  return `${entries.map((e) => e.join('\n')).join('\n\n')}\n`;
}

async function runToEnd(name: string, command: string, args: string[]): Promise<void> {
  const p = Proc.start(name, command, args);
  const exit = await p.exited;
  await p.drained();
  if (exit.code !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed (code=${exit.code} signal=${exit.signal}):\n${p.tail(30)}`,
    );
}

async function adminBindWorks(url: string): Promise<boolean> {
  const client = new Client({ url, connectTimeout: 1000, timeout: 2000 });
  try {
    await client.bind(ADMIN_DN, ADMIN_PASSWORD);
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => {});
  }
}

/** Starts slapd with the directory above; resolves once an admin bind succeeds (up to 15 s). */
export async function startSlapd(): Promise<Slapd> {
  const slapd = findExecutable('slapd', {
    candidates: ['/usr/sbin/slapd'],
    extraDirs: ['/usr/sbin', '/usr/local/sbin', '/usr/libexec'],
  });
  const slapadd = findExecutable('slapadd', {
    candidates: ['/usr/sbin/slapadd'],
    extraDirs: ['/usr/sbin', '/usr/local/sbin'],
  });
  const dir = tempDir('slapd');
  fs.mkdirSync(path.join(dir, 'data'));
  const conf = path.join(dir, 'slapd.conf');
  fs.writeFileSync(conf, slapdConf(dir));
  fs.writeFileSync(path.join(dir, 'data.ldif'), dataLdif());
  await runToEnd('slapadd', slapadd, ['-q', '-f', conf, '-l', path.join(dir, 'data.ldif')]);

  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const proc = Proc.start('slapd', slapd, ['-f', conf, '-h', `${url}/`, '-d', '0']);
  const deadline = Date.now() + 15_000;
  while (!(await adminBindWorks(url))) {
    if (!proc.running) {
      await proc.drained();
      throw new Error(
        `slapd exited before becoming ready (code=${proc.exit?.code} signal=${proc.exit?.signal}):\n${proc.tail(40)}`,
      );
    }
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`slapd not ready on ${url} after 15 s:\n${proc.tail(40)}`);
    }
    await sleep(100);
  }
  return {
    url,
    port,
    baseDn: BASE_DN,
    bindDn: BINDER_DN,
    bindPassword: BINDER_PASSWORD,
    adminDn: ADMIN_DN,
    adminPassword: ADMIN_PASSWORD,
    peopleDn: `ou=people,${BASE_DN}`,
    groupsDn: `ou=groups,${BASE_DN}`,
    proc,
    stop: async () => {
      await proc.stop(5000);
    },
  };
}
