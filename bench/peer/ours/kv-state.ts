/**
 * What JetStream holds for the actor buckets: the history each key keeps (`max_msgs_per_subject`)
 * and the messages and bytes stored, read over a connection of the bench's own.
 */
import { connect } from 'nats';
import { buckets } from '../../../proto/names.ts';

export interface BucketState {
  bucket: string;
  /** Revisions kept per key; older ones are removed by the server on each write. */
  history: number;
  messages: number;
  bytes: number;
}

export async function kvState(natsUrl: string): Promise<BucketState[]> {
  const nc = await connect({ servers: natsUrl, name: 'bench-peer-kv-state' });
  try {
    const jsm = await nc.jetstreamManager();
    const out: BucketState[] = [];
    for (const bucket of [buckets.entities, buckets.events]) {
      const info = await jsm.streams.info(`KV_${bucket}`);
      out.push({
        bucket,
        history: info.config.max_msgs_per_subject,
        messages: info.state.messages,
        bytes: info.state.bytes,
      });
    }
    return out;
  } finally {
    await nc.close();
  }
}
