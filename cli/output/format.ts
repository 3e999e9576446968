import { checkFormat } from '../config/settings.ts';

// The output formats (docs/cli.md#output): a table, JSON as the API answers it, the wrapped form
// as JSON or YAML, a Go-like template per item, or a kubectl-like JSONPath template.

export type Format =
  | { kind: 'tabular' }
  | { kind: 'json' }
  | { kind: 'wrapped-json' }
  | { kind: 'yaml' }
  | { kind: 'template'; text: string }
  | { kind: 'jsonpath'; text: string };

/** A format from its setting (`json`, `template={{ .metadata.name }}`); a usage error for others. */
export function parseFormat(text: string, where = '--format'): Format {
  checkFormat(text, where);
  const eq = text.indexOf('=');
  if (eq > 0) {
    const kind = text.slice(0, eq) as 'template' | 'jsonpath';
    return { kind, text: text.slice(eq + 1) };
  }
  return { kind: text as 'tabular' | 'json' | 'wrapped-json' | 'yaml' };
}
