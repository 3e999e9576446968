import { runInGroup } from '../../lib/process-group.ts';

// Runs one check or hook command the way the reference does (docs/compatibility.md#command-execution):
// through the shell in a process group of its own (lib/process-group.ts), stdout and stderr combined in
// arrival order.

const TIMED_OUT_OUTPUT = 'Execution timed out\n';
/** Output kept in memory per command; an event must still fit in one frame (1 MB). */
const MAX_CAPTURE_BYTES = 512 * 1024;

interface CommandSpec {
  command: string;
  env: Record<string, string | undefined>;
  /** Seconds; 0 or absent means none. */
  timeout?: number;
  /** Written to stdin, which is then closed; no stdin at all otherwise. */
  stdin?: string;
  /** Aborting kills the process group (the agent is stopping); the result has `cancelled`. */
  signal?: AbortSignal;
}

interface CommandResult {
  status: number;
  output: string;
  /** Seconds, fractional. */
  duration: number;
  /** Unix seconds at start. */
  executed: number;
  timedOut: boolean;
  cancelled?: boolean;
}

export async function runCommand(spec: CommandSpec): Promise<CommandResult> {
  const startedAt = Date.now();
  const executed = Math.floor(startedAt / 1000);
  const chunks: Buffer[] = [];
  let captured = 0;
  const collect = (b: Buffer) => {
    if (captured >= MAX_CAPTURE_BYTES) return;
    const part = b.subarray(0, MAX_CAPTURE_BYTES - captured);
    chunks.push(part);
    captured += part.length;
  };
  const end = await runInGroup({
    command: spec.command,
    env: spec.env,
    stdin: spec.stdin,
    timeout: spec.timeout,
    signal: spec.signal,
    onStdout: collect,
    onStderr: collect,
  }).end;
  const result = (status: number, prefix = '', extra: Partial<CommandResult> = {}): CommandResult => ({
    status,
    output: prefix + Buffer.concat(chunks).toString('utf8'),
    duration: (Date.now() - startedAt) / 1000,
    executed,
    timedOut: false,
    ...extra,
  });
  switch (end.kind) {
    case 'timeout':
      return result(2, TIMED_OUT_OUTPUT, { timedOut: true });
    case 'cancelled':
      return result(3, '', { cancelled: true });
    case 'error':
      return result(3, `cannot run the command: ${end.message}`);
    case 'killed':
      return result(3, `command killed: ${end.reason}\n`);
    case 'exit':
      return end.code !== null
        ? result(end.code)
        : result(3, end.signal ? `command killed by signal ${end.signal}\n` : '');
  }
}
