/**
 * The layer rules of docs/architecture.md#layers, checked by `make lint`.
 * Each rule's name is what a wrong-way import is reported as.
 */
const layer = (name, mayImport) => ({
  name: `${name}-imports-only-${mayImport.join('-')}`,
  comment: `${name}/ may import only ${mayImport.map((l) => `${l}/`).join(', ')} and packages (docs/architecture.md#layers)`,
  severity: 'error',
  from: { path: `^${name}/` },
  to: {
    path: '^(proto|lib|actors|gateway|agent|cli|web|bin|test|bench|deploy)/',
    pathNot: `^(${mayImport.join('|')})/`,
  },
});

module.exports = {
  forbidden: [
    layer('proto', ['proto']),
    layer('lib', ['proto', 'lib']),
    layer('actors', ['proto', 'lib', 'actors']),
    layer('gateway', ['proto', 'lib', 'actors', 'gateway']),
    layer('agent', ['proto', 'lib', 'agent']),
    // monitorctl is a client of the REST API: it shares the contracts and mechanisms, nothing of the servers.
    layer('cli', ['proto', 'lib', 'cli']),
    // The dashboard runs in the browser: it talks to the backend through the REST API only.
    layer('web', ['web']),
    layer('bin', ['proto', 'lib', 'actors', 'gateway', 'agent', 'cli', 'bin']),
    // deploy/local/cluster (`make cluster`) runs the programs as processes; it shares lib/ and proto/ only.
    layer('deploy', ['proto', 'lib', 'deploy']),
    {
      name: 'runtime-knows-no-domain',
      comment:
        'actors/runtime/ is the actor runtime: it may not import an actor or backend service (docs/architecture.md#layers)',
      severity: 'error',
      from: { path: '^actors/runtime/' },
      to: { path: '^actors/', pathNot: '^actors/runtime/' },
    },
    {
      name: 'config-below-entity',
      comment:
        'actors/config/ (the configuration cache) serves every actor: it may import only actors/runtime/ among the actor folders',
      severity: 'error',
      from: { path: '^actors/config/' },
      to: { path: '^actors/', pathNot: '^actors/(runtime|config)/' },
    },
    {
      name: 'entity-below-pipeline-and-schedule',
      comment:
        'actors/entity/ feeds the pipeline and the scheduler, which read its check state and read model: it may not import them back',
      severity: 'error',
      from: { path: '^actors/entity/' },
      to: { path: '^actors/', pathNot: '^actors/(runtime|config|entity)/' },
    },
    {
      name: 'pipeline-and-schedule-apart',
      comment:
        'actors/pipeline/ and actors/schedule/ share only what lies below them (entity, config, runtime, proto, lib)',
      severity: 'error',
      from: { path: '^actors/(pipeline|schedule)/' },
      to: { path: '^actors/(pipeline|schedule)/', pathNot: '^actors/$1/' },
    },
    {
      name: 'stash-on-runtime-only',
      comment:
        'actors/stash/ (the stashes of the legacy API) stands on the runtime alone: it may import only actors/runtime/ among the actor folders',
      severity: 'error',
      from: { path: '^actors/stash/' },
      to: { path: '^actors/', pathNot: '^actors/(runtime|stash)/' },
    },
    {
      name: 'stash-apart',
      comment: 'no other actor folder uses the stashes; only gateway/ (the legacy API) does',
      severity: 'error',
      from: { path: '^actors/', pathNot: '^actors/stash/' },
      to: { path: '^actors/stash/' },
    },
    {
      name: 'no-cycles',
      comment: 'modules may not import each other in a cycle (docs/architecture.md#layers)',
      severity: 'error',
      from: { pathNot: '^(test|bench)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve to a file or an installed package',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.state|\\.cluster)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
