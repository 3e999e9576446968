import * as assert from 'uvu/assert';
import { CliError } from '../../../cli/errors.ts';

/** Runs `fn`, asserts that it refuses with monitorctl's usage error (exit 2), and returns the message. */
export function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.instance(err, CliError);
    assert.is((err as CliError).exitCode, 2);
    return (err as Error).message;
  }
  assert.unreachable('no usage error');
  return '';
}
