import { SingleBar } from 'cli-progress';

// A progress bar on stderr for work on many resources (create -f, delete -f, prune, dump), drawn
// only when stderr is a terminal: pipes and files never get its control characters.

interface Progress {
  start(total: number): void;
  tick(): void;
  stop(): void;
}

const silent: Progress = { start() {}, tick() {}, stop() {} };

/** A bar labeled `label` when `stream` is a terminal; one that draws nothing otherwise. */
export function progressOn(stream: NodeJS.WritableStream & { isTTY?: boolean }, label: string): Progress {
  if (!stream.isTTY) return silent;
  const bar = new SingleBar({
    stream,
    format: `${label} [{bar}] {value}/{total}`,
    hideCursor: true,
    clearOnComplete: true,
  });
  let started = false;
  return {
    start(total) {
      if (total < 2) return;
      bar.start(total, 0);
      started = true;
    },
    tick() {
      if (started) bar.increment();
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
