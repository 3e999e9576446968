import { at, cell, field, flag, time, type Column } from '../output/columns.ts';
import type { FieldFlag, ResourceType, WriteMethods } from './types.ts';

// Every resource type the API serves (gateway/api/app.ts and its routes), as monitorctl names and
// shows it. `type` is the wrapped form's type as Sensu's dumps spell it; `segment` the API's path.

type Item = Record<string, unknown>;

const metaName = (item: Item) => cell(at(item, 'metadata.name'));
const name: Column = { header: 'Name', value: metaName };

const CONFIG_WRITES: WriteMethods = { create: 'post', replace: true, patch: true, delete: true };

interface Def extends Partial<Omit<ResourceType, 'singular' | 'plural' | 'type' | 'columns'>> {
  singular: string;
  plural: string;
  type: string;
  columns: Column[];
  description: string;
}

function def(d: Def): ResourceType {
  const namespaced = d.namespaced ?? true;
  return {
    aliases: [],
    shortNames: [],
    otherTypes: [],
    apiVersion: 'core/v2',
    segment: d.plural,
    namespaced,
    allNamespacesRoute: namespaced,
    keyArgs: ['NAME'],
    nameOf: metaName,
    nameField: 'metadata.name',
    wrappedInApi: false,
    writes: CONFIG_WRITES,
    fieldFlags: [],
    ...d,
  };
}

const labelsFlag: FieldFlag = {
  flags: '--label <key=value...>',
  description: 'a label (repeat for several)',
  field: 'metadata.labels',
  parse: 'labels',
};

const CHECK_FLAGS: FieldFlag[] = [
  {
    flags: '--command <command>',
    description: 'the command the agent runs',
    field: 'command',
    parse: 'string',
  },
  {
    flags: '--interval <seconds>',
    description: 'seconds between runs (or --cron)',
    field: 'interval',
    parse: 'int',
  },
  {
    flags: '--cron <schedule>',
    description: 'cron schedule (or --interval)',
    field: 'cron',
    parse: 'string',
  },
  {
    flags: '--subscriptions <list>',
    description: 'comma-separated subscriptions',
    field: 'subscriptions',
    parse: 'list',
  },
  { flags: '--handlers <list>', description: 'comma-separated handlers', field: 'handlers', parse: 'list' },
  {
    flags: '--runtime-assets <list>',
    description: 'comma-separated assets',
    field: 'runtime_assets',
    parse: 'list',
  },
  {
    flags: '--publish <bool>',
    description: 'whether the check is scheduled (true/false)',
    field: 'publish',
    parse: 'bool',
  },
  {
    flags: '--ttl <seconds>',
    description: 'seconds before a missing result alerts',
    field: 'ttl',
    parse: 'int',
  },
  {
    flags: '--check-timeout <seconds>',
    description: 'seconds the command may run',
    field: 'timeout',
    parse: 'int',
  },
  labelsFlag,
];

/** What `entity update` changes by flags (a merge patch: labels are added, subscriptions replaced). */
const ENTITY_FLAGS: FieldFlag[] = [
  {
    flags: '--subscriptions <list>',
    description: 'comma-separated subscriptions (replaces them)',
    field: 'subscriptions',
    parse: 'list',
  },
  labelsFlag,
];

const HANDLER_FLAGS: FieldFlag[] = [
  { flags: '--type <type>', description: 'pipe, tcp, udp or set', field: 'type', parse: 'string' },
  {
    flags: '--command <command>',
    description: 'the command of a pipe handler',
    field: 'command',
    parse: 'string',
  },
  { flags: '--filters <list>', description: 'comma-separated filters', field: 'filters', parse: 'list' },
  { flags: '--mutator <name>', description: 'the mutator', field: 'mutator', parse: 'string' },
  {
    flags: '--handlers <list>',
    description: 'the handlers of a set handler, comma-separated',
    field: 'handlers',
    parse: 'list',
  },
  {
    flags: '--handler-timeout <seconds>',
    description: 'seconds the handler may run',
    field: 'timeout',
    parse: 'int',
  },
  {
    flags: '--runtime-assets <list>',
    description: 'comma-separated assets',
    field: 'runtime_assets',
    parse: 'list',
  },
  labelsFlag,
];

/** Rules as `verbs:resources[:names]`, separated by spaces. */
const rules: Column = {
  header: 'Rules',
  value: (item) =>
    (Array.isArray(item.rules) ? (item.rules as Item[]) : [])
      .map((r) => [cell(r.verbs), cell(r.resources), cell(r.resource_names)].filter(Boolean).join(':'))
      .join(' '),
};

const subjects = (kind: 'User' | 'Group', header: string): Column => ({
  header,
  value: (item) =>
    (Array.isArray(item.subjects) ? (item.subjects as Item[]) : [])
      .filter((s) => s.type === kind)
      .map((s) => cell(s.name))
      .join(','),
});

export const RESOURCE_TYPES: readonly ResourceType[] = [
  def({
    singular: 'asset',
    plural: 'assets',
    type: 'Asset',
    description: 'dynamic runtime assets',
    columns: [
      name,
      {
        header: 'URL',
        value: (i) => cell(at(i, 'url') ?? (at(i, 'builds') as Item[] | undefined)?.[0]?.url),
      },
      {
        header: 'Hash',
        value: (i) =>
          cell(at(i, 'sha512') ?? (at(i, 'builds') as Item[] | undefined)?.[0]?.sha512).slice(0, 7),
      },
    ],
  }),
  def({
    singular: 'check',
    plural: 'checks',
    type: 'CheckConfig',
    description: 'check configurations',
    fieldFlags: CHECK_FLAGS,
    columns: [
      name,
      field('Command', 'command'),
      field('Interval', 'interval'),
      field('Cron', 'cron'),
      field('Timeout', 'timeout'),
      field('TTL', 'ttl'),
      field('Subscriptions', 'subscriptions'),
      field('Handlers', 'handlers'),
      field('Assets', 'runtime_assets'),
      flag('Publish?', 'publish'),
    ],
  }),
  def({
    singular: 'entity',
    plural: 'entities',
    type: 'Entity',
    description: 'agents, proxies and the backend, with their state',
    fieldFlags: ENTITY_FLAGS,
    columns: [
      name,
      field('Class', 'entity_class'),
      field('OS', 'system.os'),
      field('Subscriptions', 'subscriptions'),
      time('Last Seen', 'last_seen'),
    ],
  }),
  def({
    singular: 'event',
    plural: 'events',
    type: 'Event',
    description: 'the latest result of each check on each entity',
    keyArgs: ['ENTITY', 'CHECK'],
    nameOf: (i) => `${cell(at(i, 'entity.metadata.name'))}/${cell(at(i, 'check.metadata.name'))}`,
    nameField: undefined,
    writes: { create: 'post-item', replace: true, patch: false, delete: true },
    columns: [
      field('Entity', 'entity.metadata.name'),
      field('Check', 'check.metadata.name'),
      { header: 'Output', value: (i) => cell(at(i, 'check.output')).trim().split('\n')[0] ?? '' },
      field('Status', 'check.status'),
      flag('Silenced', 'check.is_silenced'),
      time('Timestamp', 'timestamp'),
      field('UUID', 'id'),
    ],
  }),
  def({
    singular: 'filter',
    plural: 'filters',
    type: 'EventFilter',
    description: 'event filters of handlers and pipelines',
    columns: [
      name,
      field('Action', 'action'),
      field('Expressions', 'expressions'),
      field('Assets', 'runtime_assets'),
    ],
  }),
  def({
    singular: 'handler',
    plural: 'handlers',
    type: 'Handler',
    description: 'what is done with events',
    fieldFlags: HANDLER_FLAGS,
    columns: [
      name,
      field('Type', 'type'),
      field('Timeout', 'timeout'),
      field('Filters', 'filters'),
      field('Mutator', 'mutator'),
      {
        header: 'Execute',
        value: (i) =>
          i.type === 'set'
            ? cell(i.handlers)
            : i.type === 'tcp' || i.type === 'udp'
              ? `${cell(at(i, 'socket.host'))}:${cell(at(i, 'socket.port'))}`
              : cell(i.command),
      },
      field('Assets', 'runtime_assets'),
    ],
  }),
  def({
    singular: 'hook',
    plural: 'hooks',
    type: 'HookConfig',
    otherTypes: ['Hook'],
    description: 'commands run after a check, by status',
    columns: [name, field('Command', 'command'), field('Timeout', 'timeout'), flag('Stdin?', 'stdin')],
  }),
  def({
    singular: 'mutator',
    plural: 'mutators',
    type: 'Mutator',
    description: 'event transformations before a handler',
    columns: [name, field('Type', 'type'), field('Command', 'command'), field('Assets', 'runtime_assets')],
  }),
  def({
    singular: 'pipeline',
    plural: 'pipelines',
    type: 'Pipeline',
    description: 'workflows of filters, mutators and handlers',
    columns: [
      name,
      {
        header: 'Workflows',
        value: (i) =>
          Array.isArray(i.workflows) ? (i.workflows as Item[]).map((w) => cell(w.name)).join(',') : '',
      },
    ],
  }),
  def({
    singular: 'role',
    plural: 'roles',
    type: 'Role',
    description: 'permissions within a namespace',
    columns: [name, rules],
  }),
  def({
    singular: 'role-binding',
    plural: 'role-bindings',
    aliases: ['rolebinding', 'rolebindings'],
    segment: 'rolebindings',
    type: 'RoleBinding',
    description: 'roles given to users and groups in a namespace',
    columns: [
      name,
      { header: 'Role Ref', value: (i) => `${cell(at(i, 'role_ref.type'))}/${cell(at(i, 'role_ref.name'))}` },
      subjects('User', 'Users'),
      subjects('Group', 'Groups'),
    ],
  }),
  def({
    singular: 'silenced',
    plural: 'silenced',
    type: 'Silenced',
    description: 'silencing entries by subscription and check',
    columns: [
      name,
      field('Subscription', 'subscription'),
      field('Check', 'check'),
      time('Begin', 'begin'),
      {
        header: 'Expire',
        value: (i) => (typeof i.expire === 'number' && i.expire > 0 ? `${i.expire}s` : 'never'),
      },
      flag('Expire On Resolve', 'expire_on_resolve'),
      field('Creator', 'creator'),
      field('Reason', 'reason'),
    ],
  }),
  def({
    singular: 'namespace',
    plural: 'namespaces',
    shortNames: ['ns'],
    type: 'Namespace',
    description: 'namespaces',
    namespaced: false,
    nameOf: (i) => cell(i.name ?? at(i, 'metadata.name')),
    nameField: 'name',
    writes: { create: 'post', replace: true, patch: false, delete: true },
    columns: [{ header: 'Name', value: (i) => cell(i.name ?? at(i, 'metadata.name')) }],
  }),
  def({
    singular: 'user',
    plural: 'users',
    type: 'User',
    description: 'users of the API (delete disables)',
    namespaced: false,
    nameOf: (i) => cell(i.username),
    nameField: 'username',
    writes: { create: 'post', replace: true, patch: false, delete: true },
    columns: [
      { header: 'Username', value: (i) => cell(i.username) },
      field('Groups', 'groups'),
      { header: 'Enabled', value: (i) => String(i.disabled !== true) },
    ],
  }),
  def({
    singular: 'cluster-role',
    plural: 'cluster-roles',
    aliases: ['clusterrole', 'clusterroles'],
    segment: 'clusterroles',
    type: 'ClusterRole',
    description: 'permissions in every namespace and on cluster-wide resources',
    namespaced: false,
    columns: [name, rules],
  }),
  def({
    singular: 'cluster-role-binding',
    plural: 'cluster-role-bindings',
    aliases: ['clusterrolebinding', 'clusterrolebindings'],
    segment: 'clusterrolebindings',
    type: 'ClusterRoleBinding',
    description: 'cluster roles given to users and groups',
    namespaced: false,
    columns: [
      name,
      { header: 'Cluster Role', value: (i) => cell(at(i, 'role_ref.name')) },
      subjects('User', 'Users'),
      subjects('Group', 'Groups'),
    ],
  }),
  def({
    singular: 'api-key',
    plural: 'api-keys',
    aliases: ['apikey', 'apikeys'],
    segment: 'apikeys',
    type: 'APIKey',
    description: 'API keys (the key is the name; made by the backend)',
    namespaced: false,
    writes: { replace: false, patch: true, delete: true },
    columns: [name, field('Username', 'username'), time('Created At', 'created_at')],
  }),
  def({
    singular: 'auth-provider',
    plural: 'auth-providers',
    aliases: ['auth', 'authprovider', 'authproviders'],
    apiVersion: 'authentication/v2',
    segment: 'authproviders',
    type: 'ldap',
    otherTypes: ['ad', 'oidc'],
    description: 'authentication providers (ldap, ad, oidc)',
    namespaced: false,
    wrappedInApi: true,
    writes: { create: 'put', replace: true, patch: false, delete: true },
    columns: [
      name,
      field('Type', 'type'),
      {
        header: 'Servers',
        value: (i) => {
          const servers = at(i, 'spec.servers');
          return Array.isArray(servers)
            ? servers.map((s: Item) => cell(s.host)).join(',')
            : cell(at(i, 'spec.server'));
        },
      },
    ],
  }),
];
