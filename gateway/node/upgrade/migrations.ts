import { checksRevalidated } from './checks.ts';
import type { Migration } from './migration.ts';

// The datastore's migrations, in order and append-only: `MIGRATIONS[n]` takes a datastore from
// version n to n + 1, so a datastore written before versions existed (no version key: version 0)
// has them all to run, and a new one is written at `LATEST` (docs/operations.md#upgrades). A
// migration once released is never edited or removed: datastores in the field count on the
// numbering. Each has its own test (test/integration/upgrade-*.test.ts).

export const MIGRATIONS: readonly Migration[] = [checksRevalidated];

/** The version this program writes and expects. */
export const LATEST = MIGRATIONS.length;
