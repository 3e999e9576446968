#!/usr/bin/env node
// A stand-in for a person at an editor, for test/e2e/monitorctl-files.test.ts: monitorctl edit runs
// it as $EDITOR (through the shell, with the file's path as its last argument). It replaces the text
// EDIT_FROM with EDIT_TO in the file, records the file's path and mode in EDIT_LOG, and changes
// nothing when EDIT_FROM is unset.
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const file = process.argv[process.argv.length - 1];
if (process.env.EDIT_LOG)
  appendFileSync(
    process.env.EDIT_LOG,
    `${file} ${(statSync(file).mode & 0o777).toString(8)} ${process.argv.slice(2, -1).join(' ')}\n`,
  );
if (process.env.EDIT_FROM) {
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace(process.env.EDIT_FROM, process.env.EDIT_TO ?? ''));
}
