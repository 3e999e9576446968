import { createRequire } from 'node:module';

// The parser is required on first use, not imported: an agent run without a config file or an allow
// list never reads YAML, and loading the package costs it memory for good
// (docs/operations.md#agent-memory).
let yaml: typeof import('yaml') | undefined;

/**
 * YAML text of an operator's file (a config file, an allow list) as plain data, or an Error whose
 * first line says where it is wrong. Only the core schema's plain types: a tag it does not know
 * (`!foo`, or YAML 1.1's `!!binary`, `!!set`, `!!timestamp`) is an error here, not a warning
 * printed by the library and a value quietly read as something else (docs/compatibility.md#config-files).
 */
export function parseYamlFile(text: string): unknown {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const doc = yaml.parseDocument(text, { schema: 'core', resolveKnownTags: false, logLevel: 'error' });
  const problem = doc.errors[0] ?? doc.warnings[0];
  // The library's message goes on with the line quoted; its first line names the place.
  if (problem) throw new Error(problem.message.split('\n')[0]!.replace(/:$/, ''));
  return doc.toJS({ maxAliasCount: 100 });
}
