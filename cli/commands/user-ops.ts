import type { Command } from 'commander';
import type { CliDeps } from '../deps.ts';
import { CliError, usageError } from '../errors.ts';
import type { Settings } from '../config/settings.ts';
import { about, commaList, confirmYes, dropSubcommand, promptSecret, secretFromStdin } from './ops-input.ts';
import { groupCommand, type CommandGroup } from './registry.ts';

// The commands of users and API keys beyond the generic list and info (docs/cli.md#users-and-api-keys):
// user create with a password that is never echoed or printed, disable and reinstate, passwords,
// groups; api-key grant and revoke.

type Item = Record<string, unknown>;

const USERS = '/api/core/v2/users';
const userPath = (name: string, ...rest: string[]) =>
  [`${USERS}/${encodeURIComponent(name)}`, ...rest.map(encodeURIComponent)].join('/');
const subject = (name: string) => `user "${name}"`;

/** The `sub` of a JWT, unverified: only to name the caller's own user. */
function tokenSubject(token: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      sub?: unknown;
    };
    return typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

/** The user the credential in use belongs to, when monitorctl can tell (not with an API key). */
function ownUsername(s: Settings): string | undefined {
  if (s.credential.kind !== 'token') return undefined;
  if (s.credential.source === 'context' && s.context?.username) return s.context.username;
  return tokenSubject(s.credential.token);
}

/** The password of `--password`, `--password-stdin` or a prompt, in that order. */
async function passwordOf(
  deps: CliDeps,
  o: { password?: string; passwordStdin?: boolean },
  what: string,
  flags: string,
): Promise<string> {
  if (o.password !== undefined && o.passwordStdin) throw usageError(`give only one of ${flags}`);
  if (o.password !== undefined) {
    if (o.password === '') throw usageError('a password cannot be empty');
    return o.password;
  }
  if (o.passwordStdin) return secretFromStdin(deps, '--password-stdin');
  return promptSecret(deps, `${what}:`, `${what}: not a terminal: give ${flags}`, true);
}

/** Runs one write of the API about `what`, then prints `done`. */
async function write(deps: CliDeps, what: string, done: string, call: () => Promise<unknown>) {
  await call().catch((err: unknown) => {
    throw about(err, what);
  });
  deps.out.write(`${done}\n`);
}

function registerUser(program: Command, deps: CliDeps): void {
  const group = dropSubcommand(groupCommand(program, 'user'), 'create');

  group
    .command('create')
    .description('create a user (the password is asked on a terminal, never echoed)')
    .argument('<name>')
    .option(
      '--password <password>',
      'the password (visible in the process list: prefer a prompt or --password-stdin)',
    )
    .option('--password-stdin', 'read the password from the first line of stdin')
    .option('--groups <list>', 'comma-separated groups')
    .action(async (name: string, o: { password?: string; passwordStdin?: boolean; groups?: string }, c) => {
      const client = deps.client(c);
      const password = await passwordOf(deps, o, 'Password', '--password or --password-stdin');
      const body = { username: name, password, groups: o.groups !== undefined ? commaList(o.groups) : [] };
      await write(deps, subject(name), `Created ${subject(name)}`, () => client.post(USERS, body));
    });

  const disable = async (name: string, o: { skipConfirm?: boolean }, c: Command) => {
    const client = deps.client(c);
    if (!o.skipConfirm && !(await confirmYes(deps, `Disable ${subject(name)}?`, 'user disable'))) {
      deps.out.write('Canceled: nothing changed\n');
      return;
    }
    await write(deps, subject(name), `Disabled ${subject(name)}`, () => client.delete(userPath(name)));
  };
  group
    .command('disable')
    .description('disable a user: its logins, tokens and API keys are refused until it is reinstated')
    .argument('<name>')
    .option('--skip-confirm', 'do not ask for confirmation')
    .action(disable);

  group
    .command('reinstate')
    .description('enable a disabled user again')
    .argument('<name>')
    .action(async (name: string, _o: Item, c: Command) => {
      const client = deps.client(c);
      await write(deps, subject(name), `Reinstated ${subject(name)}`, () =>
        client.put(userPath(name, 'reinstate'), {}),
      );
    });

  group
    .command('change-password')
    .description(
      "change a password: your own (the current one is needed), or another user's as an administrator",
    )
    .argument('[name]', 'the user (default: the one logged in)')
    .option('--current-password <password>', 'the current password (asked on a terminal for your own)')
    .option('--new-password <password>', 'the new password (asked on a terminal)')
    .option('--password-stdin', 'read the new password from the first line of stdin')
    .action(
      async (
        given: string | undefined,
        o: { currentPassword?: string; newPassword?: string; passwordStdin?: boolean },
        c: Command,
      ) => {
        const s = deps.settings(c);
        const client = deps.client(c);
        const own = ownUsername(s);
        const name = given ?? own;
        if (!name)
          throw usageError(
            'user change-password: name the user (the logged-in user is not known with an API key)',
          );
        const self = name === own;
        let current = o.currentPassword;
        if (current === undefined && self)
          current = await promptSecret(
            deps,
            'Current password:',
            'user change-password: not a terminal: give --current-password',
          );
        const fresh = await passwordOf(
          deps,
          { password: o.newPassword, passwordStdin: o.passwordStdin },
          'New password',
          '--new-password or --password-stdin',
        );
        // With the current password: the self-service route, which checks it. Without (another
        // user): the administrator's route.
        await write(deps, subject(name), `Changed the password of ${subject(name)}`, () =>
          current !== undefined
            ? client.put(userPath(name, 'change_password'), { password: current, password_new: fresh })
            : client.put(userPath(name, 'reset_password'), { password_new: fresh }),
        );
      },
    );

  group
    .command('add-group')
    .description('add a user to a group')
    .argument('<name>')
    .argument('<group>')
    .action(async (name: string, g: string, _o: Item, c: Command) => {
      const client = deps.client(c);
      await write(deps, subject(name), `Added ${subject(name)} to group "${g}"`, () =>
        client.put(userPath(name, 'groups', g), {}),
      );
    });

  group
    .command('remove-group')
    .description('remove a user from a group')
    .argument('<name>')
    .argument('<group>')
    .action(async (name: string, g: string, _o: Item, c: Command) => {
      const client = deps.client(c);
      await write(deps, subject(name), `Removed ${subject(name)} from group "${g}"`, () =>
        client.delete(userPath(name, 'groups', g)),
      );
    });

  group
    .command('remove-all-groups')
    .description('remove a user from every group')
    .argument('<name>')
    .action(async (name: string, _o: Item, c: Command) => {
      const client = deps.client(c);
      await write(deps, subject(name), `Removed ${subject(name)} from every group`, () =>
        client.delete(userPath(name, 'groups')),
      );
    });
}

const APIKEYS = '/api/core/v2/apikeys';

function registerApiKey(program: Command, deps: CliDeps): void {
  const group = groupCommand(program, 'api-key');

  group
    .command('grant')
    .description('make an API key for a user; the key is printed once, alone on its line')
    .argument('<user>')
    .action(async (user: string, _o: Item, c: Command) => {
      const format = deps.format(c);
      const res = await deps
        .client(c)
        .post(APIKEYS, { username: user })
        .catch((err: unknown) => {
          throw about(err, `API key for ${subject(user)}`);
        });
      const location = res.headers.location;
      const key = (Array.isArray(location) ? location[0] : location)?.split('/').pop();
      if (!key) throw new CliError('failure', 'api-key grant: the API did not say which key it made');
      if (format.kind === 'json') deps.out.write(`${JSON.stringify({ key, username: user }, null, 2)}\n`);
      else deps.out.write(`${decodeURIComponent(key)}\n`);
    });

  group
    .command('revoke')
    .description('revoke an API key: it is refused from then on')
    .argument('<key>')
    .option('--skip-confirm', 'do not ask for confirmation')
    .action(async (key: string, o: { skipConfirm?: boolean }, c: Command) => {
      const client = deps.client(c);
      if (!o.skipConfirm && !(await confirmYes(deps, 'Revoke this API key?', 'api-key revoke'))) {
        deps.out.write('Canceled: nothing changed\n');
        return;
      }
      // The key is a secret: messages never repeat it.
      await write(deps, 'API key', 'Revoked the API key', () =>
        client.delete(`${APIKEYS}/${encodeURIComponent(key)}`),
      );
    });
}

export const userOpsCommands: CommandGroup = {
  register(program, deps) {
    registerUser(program, deps);
    registerApiKey(program, deps);
  },
};
