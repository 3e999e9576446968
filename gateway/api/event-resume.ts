import type { EntityReadModel, EventChange } from '../../actors/entity/read-model.ts';

// Where a live event stream starts (docs/compatibility.md#live-event-stream-resumes): at "now" for a
// new client, or, for one that comes back with `Last-Event-ID`, after the revision it saw last, with
// the changes it missed replayed from the bucket; or it tells the client to list again.

const DEFAULTS = {
  /** Changes past the client's revision beyond which a list is cheaper than a replay. */
  maxReplayChanges: 1000,
  /** Bytes of replayed changes (what the client would see) beyond which the client lists again instead. */
  maxReplayBytes: 4 * 1024 * 1024,
} as const;

/** What a feed needs of the read model to resume a stream. */
export type ResumeSource = Pick<EntityReadModel, 'eventRevision' | 'eventHistory' | 'eventChangesSince'>;

export type StreamStart =
  /** A new stream: it follows from `revision`, the read model's position when it opened. */
  | { kind: 'start'; revision: number; replay: []; floor: number }
  /** The client's revision is resumable: `replay` holds what it missed (those it may see), in order. */
  | { kind: 'resume'; revision: number; replay: EventChange[]; floor: number }
  /** The client must list again, then follow from `revision`; `message` says why. */
  | { kind: 'relist'; revision: number; message: string; replay: []; floor: number };

/**
 * `position` is the read model's revision when the stream subscribed to its changes: every change
 * after it reaches the stream live, so a replay reads the bucket only up to it. `floor` is the
 * revision at or below which live changes are not sent (the client has them already).
 */
export async function planStart(
  source: ResumeSource,
  position: number,
  lastEventId: string | undefined,
  visible: (change: EventChange) => string | undefined,
): Promise<StreamStart> {
  const relist = (message: string): StreamStart => ({
    kind: 'relist',
    revision: position,
    message,
    replay: [],
    floor: position,
  });
  if (lastEventId === undefined) return { kind: 'start', revision: position, replay: [], floor: position };
  const id = lastEventId.trim();
  if (!/^[0-9]{1,15}$/.test(id))
    return relist(`Last-Event-ID "${id.slice(0, 40)}" is not a revision of the event stream; list again`);
  const since = Number(id);
  let history: { first: number; last: number };
  try {
    history = await source.eventHistory();
  } catch (err) {
    return relist(
      `the changes since revision ${since} could not be read (${(err as Error).message}); list again`,
    );
  }
  if (since > history.last)
    return relist(
      `revision ${since} is not one of the event stream (its latest is ${history.last}); list again`,
    );
  // The bucket keeps each key's latest write: below its oldest, writes (deletes among them) may be gone.
  if (since + 1 < history.first)
    return relist(
      `revision ${since} is older than the history kept (its oldest is ${history.first}); list again`,
    );
  if (since >= position) return { kind: 'resume', revision: since, replay: [], floor: since };
  let changes: EventChange[] | undefined;
  try {
    changes = await source.eventChangesSince(since, position, DEFAULTS.maxReplayChanges);
  } catch (err) {
    return relist(
      `the changes since revision ${since} could not be read (${(err as Error).message}); list again`,
    );
  }
  if (!changes)
    return relist(`more than ${DEFAULTS.maxReplayChanges} changes since revision ${since}; list again`);
  const replay: EventChange[] = [];
  let bytes = 0;
  for (const c of changes) {
    const text = visible(c);
    if (text === undefined) continue;
    bytes += text.length;
    if (bytes > DEFAULTS.maxReplayBytes)
      return relist(`the changes since revision ${since} are too large to replay; list again`);
    replay.push(c);
  }
  return { kind: 'resume', revision: since, replay, floor: position };
}
