import type { ActorClient, AskOptions } from '../runtime/ask.ts';
import { STASH_KIND, type StashMessage, type StashProtocol } from './messages.ts';

/** The stash actor of one path, as its senders see it: each message with its own body and reply. */
interface StashRef {
  ask<T extends StashMessage>(
    type: T,
    body: StashProtocol[T]['body'],
    opts?: AskOptions,
  ): Promise<StashProtocol[T]['reply']>;
}

/** The stash actor of `path`; refusals arrive as the runtime's ActorError. */
export function stashRef(actors: ActorClient, path: string): StashRef {
  return {
    ask<T extends StashMessage>(type: T, body: StashProtocol[T]['body'], opts?: AskOptions) {
      return actors.ask<StashProtocol[T]['reply']>(STASH_KIND, path, type, body, opts);
    },
  };
}
