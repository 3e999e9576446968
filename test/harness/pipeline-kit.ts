import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { created, type coreApi } from './api.ts';
import { waitFor } from './index.ts';

/**
 * Pipe handlers that write each payload they get to a file of their own, and the calls around them,
 * for the pipeline suites (e2e/pipeline, e2e/pipeline-sandbox): `root` is where their folders go.
 */
export function pipelineKit(api: ReturnType<typeof coreApi>, root: () => string) {
  /** A pipe handler that writes each payload it gets to a file of its own in a fresh directory. */
  async function fileHandler(name: string, extra: Record<string, unknown> = {}): Promise<string> {
    const dir = join(root(), name);
    mkdirSync(dir, { recursive: true });
    const r = await api(`/namespaces/default/handlers/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      type: 'pipe',
      command: `cat > "$(mktemp -p ${dir} ev.XXXXXX)"`,
      ...extra,
    });
    assert.ok(r.status === 201 || r.status === 200, `handler ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return dir;
  }

  /** Every complete payload a file handler wrote so far. */
  function payloads(dir: string): string[] {
    return readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .filter((s) => s.length > 0);
  }
  function events(dir: string): any[] {
    const out: any[] = [];
    for (const p of payloads(dir)) {
      try {
        out.push(JSON.parse(p));
      } catch {
        /* still being written */
      }
    }
    return out;
  }
  const waitEvents = (dir: string, pred: (e: any) => boolean, what: string, timeoutMs = 15000) =>
    waitFor(
      () => {
        const found = events(dir).filter(pred);
        return found.length ? found : undefined;
      },
      { timeoutMs, what },
    );

  async function put(kind: string, name: string, body: Record<string, unknown>) {
    const r = await api(`/namespaces/default/${kind}/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      ...body,
    });
    assert.ok(r.status === 201 || r.status === 200, `${kind} ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  }

  const postEvent = async (
    entity: string,
    check: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) =>
    created(
      await api('/namespaces/default/events', 'POST', {
        entity: { metadata: { name: entity } },
        check,
        ...extra,
      }),
      'event',
    );
  return { fileHandler, payloads, events, waitEvents, put, postEvent };
}
