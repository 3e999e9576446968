import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';

// Questions asked on a terminal (@inquirer/prompts, loaded only when one is asked). Ctrl-C or a
// closed terminal ends the command as canceled.

type Prompts = typeof import('@inquirer/prompts');
let prompts: Prompts | undefined;

async function load(): Promise<Prompts> {
  prompts ??= await import('@inquirer/prompts');
  return prompts;
}

/** Runs one question; a cancel (Ctrl-C) becomes a usage error. */
export async function ask<T>(
  deps: CliDeps,
  question: (p: Prompts, ctx: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }) => Promise<T>,
): Promise<T> {
  const p = await load();
  try {
    return await question(p, { input: deps.io.stdin, output: deps.io.stdout });
  } catch (err) {
    if ((err as Error)?.name === 'ExitPromptError' || (err as Error)?.name === 'AbortPromptError')
      throw usageError('canceled');
    throw err;
  }
}

/** Asks to type `name` to confirm `action`; true when it was typed. */
export async function confirmByName(deps: CliDeps, action: string, name: string): Promise<boolean> {
  const typed = await ask(deps, (p, ctx) =>
    p.input({ message: `Are you sure you want to ${action}? Type "${name}" to confirm:` }, ctx),
  );
  return typed.trim() === name;
}
