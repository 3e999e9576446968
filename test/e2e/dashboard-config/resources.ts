// The configuration the dashboard-config suite creates through the API: one resource of each kind
// the configuration views show.

const ref = (type: string, name: string) => ({ name, type, api_version: 'core/v2' });
const SHA = 'ab'.repeat(64);
/** One resource of each kind, and what its list shows in the kind's own column. */
export const RESOURCES = [
  {
    plural: 'handlers',
    one: 'Handler',
    name: 'cfg-slack',
    shows: 'notify-slack --channel ops',
    fact: ['Mutator', 'cfg-js'],
    body: {
      metadata: { name: 'cfg-slack', labels: { team: 'ops' } },
      type: 'pipe',
      command: 'notify-slack --channel ops',
      filters: ['cfg-only-prod'],
      mutator: 'cfg-js',
      timeout: 10,
    },
  },
  {
    plural: 'filters',
    one: 'Filter',
    name: 'cfg-only-prod',
    shows: "event.entity.labels.env == 'prod'",
    fact: ['Action', 'allow'],
    body: {
      metadata: { name: 'cfg-only-prod', labels: { team: 'ops' } },
      action: 'allow',
      expressions: ["event.entity.labels.env == 'prod'"],
    },
  },
  {
    plural: 'mutators',
    one: 'Mutator',
    name: 'cfg-js',
    shows: 'return { text: event.check.output };',
    fact: ['Type', 'javascript'],
    body: { metadata: { name: 'cfg-js' }, type: 'javascript', eval: 'return { text: event.check.output };' },
  },
  {
    plural: 'pipelines',
    one: 'Pipeline',
    name: 'cfg-pipe',
    shows: 'cfg-slack',
    fact: ['Workflow to-slack', 'filter cfg-only-prod → mutator cfg-js → handler cfg-slack'],
    body: {
      metadata: { name: 'cfg-pipe', labels: { team: 'ops' } },
      workflows: [
        {
          name: 'to-slack',
          filters: [ref('EventFilter', 'cfg-only-prod')],
          mutator: ref('Mutator', 'cfg-js'),
          handler: ref('Handler', 'cfg-slack'),
        },
      ],
    },
  },
  {
    plural: 'assets',
    one: 'Asset',
    name: 'cfg-tool',
    shows: 'https://example.com/tool.tar.gz',
    fact: ['SHA-512', SHA],
    body: {
      metadata: { name: 'cfg-tool', labels: { team: 'dev' } },
      url: 'https://example.com/tool.tar.gz',
      sha512: SHA,
    },
  },
] as const;
