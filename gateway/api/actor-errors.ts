import { ENTITY_KIND, entityActorId } from '../../actors/entity/messages.ts';
import type { ActorClient } from '../../actors/runtime/ask.ts';
import { ActorError } from '../../actors/runtime/types.ts';
import { ApiError } from './errors.ts';

/** Runs an actor call and turns its refusal into the matching API error. */
export async function viaActor<T>(call: Promise<T>): Promise<T> {
  try { return await call; }
  catch (err) {
    if (!(err instanceof ActorError)) throw err;
    switch (err.code) {
      case 'not_found': throw new ApiError('not_found', err.message);
      case 'invalid': throw new ApiError('invalid_argument', err.message);
      case 'conflict': throw new ApiError('already_exists', err.message);
      case 'unavailable': throw new ApiError('unavailable', err.message);
      default: throw new ApiError('internal', err.message);
    }
  }
}

/**
 * Asks the entity actor of `ns/name` (the one writer of an entity and its events), as API errors.
 * `msgId` names the request for the actor's dedupe (see idempotency.ts).
 */
export function askEntity(actors: ActorClient, ns: string, name: string, type: string, body: unknown, msgId?: string): Promise<unknown> {
  return viaActor(actors.ask(ENTITY_KIND, entityActorId(ns, name), type, body, { msgId }));
}
