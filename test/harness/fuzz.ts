import fc from 'fast-check';

// Property-based fuzzing (fast-check) with a fixed seed: every run of `make test` replays the same
// cases. MONITOR_FUZZ_SEED picks another seed; a failure names the surface, the seed and the path, so
// `MONITOR_FUZZ_SEED=<seed>` replays it (fast-check's own report, kept below the first line, holds the
// counterexample and its path).

const FUZZ_SEED = Number(process.env.MONITOR_FUZZ_SEED ?? 1313);

/** Runs `property` for `numRuns` cases with the suite seed; a failure's message names `surface`. */
export async function fuzz<Ts>(
  surface: string,
  property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>,
  numRuns: number,
): Promise<void> {
  try {
    await fc.assert(property, { seed: FUZZ_SEED, numRuns, endOnFailure: property.isAsync() });
  } catch (err) {
    // fast-check keeps the property's own error as the cause: name it too.
    const cause = (err as Error).cause;
    const why = cause instanceof Error ? `\nerror: ${cause.message}` : '';
    throw new Error(
      `fuzz ${surface} failed (MONITOR_FUZZ_SEED=${FUZZ_SEED}; replay with it): ${(err as Error).message}${why}`,
      { cause: err },
    );
  }
}

/** Any JSON value, deep enough to reach nested fields. */
export const jsonValue = (): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth: 4 });

/** The path of every value in `base`, itself (`[]`) first; with `leaves`, only those of no object or array. */
function pathsOf(base: unknown, leaves = false): string[][] {
  const paths: string[][] = [];
  const walk = (x: unknown, p: string[]) => {
    const object = !!x && typeof x === 'object';
    if (!leaves || !object) paths.push(p);
    if (object) for (const [k, v] of Object.entries(x)) walk(v, [...p, k]);
  };
  walk(base, []);
  return paths;
}

/**
 * `base` mutated: a field somewhere replaced by an arbitrary JSON value, deleted, or a new key added;
 * the result stays mostly valid, so the schema's deeper checks get exercised.
 */
export function mutated(base: unknown): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      fc.constantFrom(...pathsOf(base)),
      fc.constantFrom('replace', 'delete', 'add'),
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('metadata', 'name', '__proto__', 'constructor')),
      jsonValue(),
    )
    .map(([path, how, key, value]) => {
      const copy = structuredClone(base) as Record<string, unknown>;
      if (path.length === 0) return how === 'replace' ? value : { ...copy, [key]: value };
      let parent: Record<string, unknown> = copy;
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
      const last = path[path.length - 1]!;
      if (how === 'replace') parent[last] = value;
      else if (how === 'delete') delete parent[last];
      else {
        const target = parent[last];
        if (target && typeof target === 'object' && !Array.isArray(target))
          Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
        else parent[last] = value;
      }
      return copy;
    });
}

/**
 * `base` with a string, number, boolean or null replaced by an object whose own keys are Object.prototype's
 * method names (`{"toString": 1}`): JSON.parse makes such objects, and `String(x)` or a template
 * literal of one throws (as `x.hasOwnProperty(k)` does), which an arbitrary value almost never
 * reaches. Leaves, since code that prints a value before validating it expects one there.
 */
export function shadowed(base: unknown): fc.Arbitrary<unknown> {
  const leaves = pathsOf(base, true);
  return fc
    .tuple(
      fc.constantFrom(...(leaves.length ? leaves : [[]])),
      jsonValue(),
      fc.dictionary(fc.constantFrom('valueOf', 'constructor', 'hasOwnProperty'), jsonValue(), {
        maxKeys: 2,
        noNullPrototype: true,
      }),
    )
    .map(([path, toString, others]) => {
      // `toString` always: it is the one String() and template literals call first.
      const value = { ...others, toString };
      if (path.length === 0) return value;
      const copy = structuredClone(base) as Record<string, unknown>;
      let parent: Record<string, unknown> = copy;
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
      parent[path[path.length - 1]!] = value;
      return copy;
    });
}

/**
 * A request body as sent: arbitrary text, an arbitrary JSON value, or `valid` mutated or shadowed
 * (weighted towards the mutations, which get past the JSON parse and reach the schema).
 */
export const bodyText = (valid: unknown): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: jsonValue().map((x) => JSON.stringify(x) ?? 'null') },
    { weight: 4, arbitrary: mutated(valid).map((x) => JSON.stringify(x) ?? 'null') },
    { weight: 1, arbitrary: shadowed(valid).map((x) => JSON.stringify(x)) },
  );

/** StatsD lines: arbitrary text, lines built from the format's tokens, and well-formed lines with odd values. */
export const statsdLine: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          ':',
          '|',
          '@',
          '#',
          ',',
          'c',
          'g',
          'ms',
          'h',
          's',
          '+',
          '-',
          '.',
          'e',
          '0.5',
          '1',
          '1e308',
          'NaN',
          'Infinity',
          'a:b',
          'fz.metric',
        ),
        fc.string({ maxLength: 4 }),
      ),
      { maxLength: 12 },
    )
    .map((p) => p.join('')),
  fc
    .tuple(
      fc.string({ maxLength: 10 }),
      fc.double(),
      fc.constantFrom('c', 'g', 'ms', 'h', 's', 'x'),
      fc.option(fc.double()),
      fc.option(fc.string({ maxLength: 10 })),
    )
    .map(
      ([n, x, t, r, tags]) =>
        `${n}:${x}|${t}${r === null ? '' : `|@${r}`}${tags === null ? '' : `|#${tags}`}`,
    ),
);
