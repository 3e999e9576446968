import * as v from 'valibot';

// User JavaScript in resources (docs/architecture.md#user-javascript): event filter `expressions`,
// a javascript mutator's `eval`, a check's `proxy_requests.entity_attributes`, an asset's `filters`
// (and its builds' filters). proto/ holds contracts only and cannot compile JavaScript: the compiler
// is QuickJS in the sandbox (lib/sandbox), a layer above. So the schemas of these resources take a
// syntax check as a parameter: the API passes the sandbox's, and refuses what does not compile with a
// 400 naming the field (`expressions.1: expression does not compile: SyntaxError: ...`). The schemas
// made without one (the constants the rest of the code uses to type and read stored resources) check
// only that these are strings: what is stored was checked when it was written.

/**
 * How a source is compiled: `expression` (a filter expression over `event`), `body` (a function body
 * with `event` in scope), `script` (a script whose completion value is the result, `entity` in scope).
 */
type JsKind = 'expression' | 'body' | 'script';

/** The syntax error of `source` compiled as `kind`, or undefined when it compiles. Runs none of it. */
export type JsSyntaxCheck = (kind: JsKind, source: string) => string | undefined;

const WHAT: Record<JsKind, string> = { expression: 'expression', body: 'function body', script: 'script' };

/** The message of a source that does not compile, or undefined. */
export function jsSyntaxIssue(
  check: JsSyntaxCheck | undefined,
  kind: JsKind,
  source: string,
): string | undefined {
  const err = check?.(kind, source);
  return err === undefined ? undefined : `${WHAT[kind]} does not compile: ${err}`;
}

/** A string of user JavaScript of a kind; with `check`, one that compiles. */
export function jsSource(kind: JsKind, check: JsSyntaxCheck | undefined) {
  return v.pipe(
    v.string(),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const message = jsSyntaxIssue(check, kind, dataset.value);
      if (message) addIssue({ message });
    }),
  );
}

/** An optional list of user JavaScript sources, as filters and entity_attributes are. */
export const jsSources = (kind: JsKind, check: JsSyntaxCheck | undefined) =>
  v.optional(v.nullable(v.array(jsSource(kind, check))));
