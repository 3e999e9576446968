import type { RequestCheckConfig, RequestHookConfig } from '../../proto/schemas/check-request.ts';

// Which hooks run after a check (docs/compatibility.md#hooks): each `check_hooks` entry names a status
// (0-255) or a class of them; every matching entry's hooks run, each hook once, in the order they are listed.

function hookTypeMatches(type: string, status: number): boolean {
  switch (type) {
    case 'ok':
      return status === 0;
    case 'warning':
      return status === 1;
    case 'critical':
      return status === 2;
    case 'unknown':
      return status > 2;
    case 'non-zero':
      return status !== 0;
    default:
      return /^\d+$/.test(type) && Number(type) === status;
  }
}

interface HookSelection {
  hooks: RequestHookConfig[];
  /** Names the check asks for that the request carried no configuration for. */
  missing: string[];
}

export function selectHooks(
  check: RequestCheckConfig,
  available: RequestHookConfig[],
  status: number,
): HookSelection {
  const byName = new Map(available.map((h) => [h.metadata.name, h]));
  const seen = new Set<string>();
  const hooks: RequestHookConfig[] = [];
  const missing: string[] = [];
  for (const list of check.check_hooks ?? []) {
    if (!hookTypeMatches(list.type, status)) continue;
    for (const name of list.hooks ?? []) {
      if (seen.has(name)) continue;
      seen.add(name);
      const h = byName.get(name);
      if (h) hooks.push(h);
      else missing.push(name);
    }
  }
  return { hooks, missing };
}
