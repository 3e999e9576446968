import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../lib/log.ts';
import { EventRefusedError } from '../events/prepare.ts';
import { lockCacheDir, OutboxOpenError } from './lock.ts';
import { frameRecord, HEADER_BYTES, MAX_RECORD_PAYLOAD, scanRecords } from './records.ts';

// The agent's durable event queue: append-only segment files in <cache-dir>/outbox plus a cursor
// file saying "every record before this sequence number is acknowledged". Records are numbered by
// position (segment file name = number of its first record), so nothing but the cursor is rewritten.
//
// Full queue policy: once `maxBytes` of segment files are on disk, NEW events are refused (the
// caller gets EventRefusedError, the HTTP API answers 500) and queued events are never dropped.
// Queued events were promised durable to their sources; a refusal is visible to the source, which
// can retry, whereas silently dropping old events would lose data nobody knows about.

const writeAsync = promisify(fs.write);
const fdatasyncAsync = promisify(fs.fdatasync);

const SEGMENT_RE = /^seg-(\d{16})\.log$/;
const CURSOR_FILE = 'cursor';
/** How long acknowledgements accumulate before the cursor is rewritten (losing it only means resends). */
const CURSOR_DELAY_MS = 200;

export interface StoreOptions {
  /** The agent's cache-dir; the queue lives in its `outbox` folder. */
  cacheDir: string;
  maxBytes: number;
  /** Size after which appends move to a new segment; default maxBytes/16 within [4 KiB, 16 MiB]. */
  segmentBytes?: number;
  log: Logger;
}

interface Segment {
  firstSeq: number;
  /** One past the last record's number. */
  endSeq: number;
  file: string;
  size: number;
  fd: number | undefined;
}

/** A queued event: where its record is, so it is read back from disk only when it is sent. */
interface Entry {
  seq: number;
  id: string;
  seg: Segment;
  offset: number;
  length: number;
}

interface Pending {
  payload: Buffer;
  id: string;
  resolve: (e: Entry) => void;
  reject: (err: Error) => void;
}

export interface StoreStats {
  /** Events stored and not yet acknowledged. */
  queued: number;
  /** Bytes of segment files on disk (what `maxBytes` bounds). */
  bytes: number;
  maxBytes: number;
  segments: number;
  /** Events refused because the queue was full (since start). */
  refused: number;
}

const segName = (seq: number) => `seg-${String(seq).padStart(16, '0')}.log`;

export class OutboxStore {
  private readonly dir: string;
  private readonly log: Logger;
  private readonly maxBytes: number;
  private readonly segmentBytes: number;
  private readonly segments: Segment[] = [];
  private active!: Segment;
  /** Unacknowledged entries by number; a Map keeps them in append order. */
  private readonly live = new Map<number, Entry>();
  private nextSeq = 0;
  private diskBytes = 0;
  /** Bytes of appends accepted but not yet written. */
  private reserved = 0;
  private batch: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private cursorTimer: NodeJS.Timeout | undefined;
  private savedCursor = -1;
  private refused = 0;
  private lastFullWarning = 0;
  private closed = false;
  private readonly unlock: () => void;

  /** Takes the cache-dir lock and reads the queue back; throws OutboxOpenError on what the operator must fix. */
  static open(opts: StoreOptions): OutboxStore {
    return new OutboxStore(opts);
  }

  private constructor(opts: StoreOptions) {
    this.log = opts.log;
    this.maxBytes = opts.maxBytes;
    this.segmentBytes =
      opts.segmentBytes ?? Math.max(4096, Math.min(16 * 1024 * 1024, Math.floor(opts.maxBytes / 16)));
    this.unlock = lockCacheDir(opts.cacheDir);
    this.dir = path.join(path.resolve(opts.cacheDir), 'outbox');
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      this.recover();
    } catch (err) {
      this.unlock();
      if (err instanceof OutboxOpenError) throw err;
      throw new OutboxOpenError(`cannot open the event queue in ${this.dir}: ${(err as Error).message}`);
    }
  }

  get stats(): StoreStats {
    return {
      queued: this.live.size,
      bytes: this.diskBytes + this.reserved,
      maxBytes: this.maxBytes,
      segments: this.segments.length,
      refused: this.refused,
    };
  }

  /** Unacknowledged entries, oldest first (after a restart: what must still be sent). */
  entries(): Entry[] {
    return [...this.live.values()];
  }

  /**
   * Queues one event; resolves once its record is written and fsynced. Appends arriving together share
   * one write and one fsync (group commit). Rejects with EventRefusedError when full or closed.
   */
  append(event: { id: string }): Promise<Entry> {
    if (this.closed) return Promise.reject(new EventRefusedError('the agent is stopping'));
    const payload = Buffer.from(JSON.stringify(event), 'utf8');
    if (payload.length > MAX_RECORD_PAYLOAD) {
      return Promise.reject(
        new EventRefusedError(
          `event is ${payload.length} bytes, more than the ${MAX_RECORD_PAYLOAD} an event may have`,
        ),
      );
    }
    const size = HEADER_BYTES + payload.length;
    if (this.diskBytes + this.reserved + size > this.maxBytes) {
      this.refused++;
      const now = Date.now();
      // One warning per 10 s: a source retrying in a loop must not flood the log.
      if (now - this.lastFullWarning >= 10_000) {
        this.lastFullWarning = now;
        this.log.warn('event queue full: refusing new events until the backend acknowledges queued ones', {
          queued: this.live.size,
          bytes: this.diskBytes + this.reserved,
          max_bytes: this.maxBytes,
          refused: this.refused,
        });
      }
      return Promise.reject(
        new EventRefusedError(`event queue full (${this.maxBytes} bytes, outbox-max-bytes)`),
      );
    }
    this.reserved += size;
    return new Promise<Entry>((resolve, reject) => {
      this.batch.push({ payload, id: event.id, resolve, reject });
      this.flushing ??= this.flushLoop();
    });
  }

  /** Reads a queued event back from its segment. */
  read(entry: Entry): unknown {
    const seg = entry.seg;
    seg.fd ??= fs.openSync(seg.file, 'r');
    const buf = Buffer.allocUnsafe(entry.length);
    let done = 0;
    while (done < entry.length) {
      const n = fs.readSync(seg.fd, buf, done, entry.length - done, entry.offset + done);
      if (n === 0) throw new Error(`${seg.file} ends before record ${entry.seq}`);
      done += n;
    }
    return JSON.parse(buf.toString('utf8'));
  }

  /** The backend took (or refused for good) this entry: it leaves the queue. */
  ack(entry: Entry): void {
    if (!this.live.delete(entry.seq)) return;
    if (!this.closed) {
      this.cursorTimer ??= setTimeout(() => {
        this.cursorTimer = undefined;
        // A failed save only means resends after a restart, never a reason to stop the agent.
        try {
          this.saveCursor();
        } catch (err) {
          this.log.warn('cannot save the event queue cursor', { error: (err as Error).message });
        }
      }, CURSOR_DELAY_MS);
    }
  }

  /** Waits for appends in progress, saves the cursor and releases the cache-dir. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    clearTimeout(this.cursorTimer);
    this.cursorTimer = undefined;
    try {
      this.saveCursor();
    } catch (err) {
      this.log.warn('cannot save the event queue cursor', { error: (err as Error).message });
    }
    for (const s of this.segments)
      if (s.fd !== undefined) {
        try {
          fs.closeSync(s.fd);
        } catch {
          /* closing anyway */
        }
        s.fd = undefined;
      }
    this.unlock();
  }

  /** Every record before this number is acknowledged. */
  private watermark(): number {
    for (const seq of this.live.keys()) return seq;
    return this.nextSeq;
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.batch.length > 0) {
        const batch = this.batch;
        this.batch = [];
        await this.writeBatch(batch);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const records = batch.map((p) => frameRecord(p.payload));
    const bytes = records.reduce((n, r) => n + r.length, 0);
    try {
      if (this.active.size >= this.segmentBytes) this.rotate();
      const seg = this.active;
      const buf = records.length === 1 ? records[0]! : Buffer.concat(records, bytes);
      let done = 0;
      while (done < bytes)
        done += (await writeAsync(seg.fd!, buf, done, bytes - done, seg.size + done)).bytesWritten;
      await fdatasyncAsync(seg.fd!);
      let offset = seg.size;
      seg.size += bytes;
      this.diskBytes += bytes;
      this.reserved -= bytes;
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!;
        const entry: Entry = {
          seq: this.nextSeq++,
          id: p.id,
          seg,
          offset: offset + HEADER_BYTES,
          length: p.payload.length,
        };
        seg.endSeq = this.nextSeq;
        offset += records[i]!.length;
        this.live.set(entry.seq, entry);
        p.resolve(entry);
      }
    } catch (err) {
      // Positional writes: the next batch overwrites whatever part of this one reached the file.
      this.reserved -= bytes;
      this.log.error('cannot write the event queue', { dir: this.dir, error: (err as Error).message });
      const refusal = new EventRefusedError(`cannot write the event queue: ${(err as Error).message}`);
      for (const p of batch) p.reject(refusal);
    }
  }

  /** Appends move to a new segment so the old one can be deleted once fully acknowledged. */
  private rotate(): void {
    const seg = this.createSegment(this.nextSeq);
    this.active = seg;
    this.dropAcknowledgedSegments();
  }

  private createSegment(firstSeq: number): Segment {
    const file = path.join(this.dir, segName(firstSeq));
    const fd = fs.openSync(file, 'w+', 0o600);
    // The new name must survive a crash too, or its fsynced records would be unreachable.
    const dirFd = fs.openSync(this.dir, 'r');
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
    const seg: Segment = { firstSeq, endSeq: firstSeq, file, size: 0, fd };
    this.segments.push(seg);
    return seg;
  }

  private saveCursor(): void {
    const mark = this.watermark();
    if (mark !== this.savedCursor) {
      const tmp = path.join(this.dir, CURSOR_FILE + '.tmp');
      fs.writeFileSync(tmp, `${mark}\n`);
      fs.renameSync(tmp, path.join(this.dir, CURSOR_FILE));
      this.savedCursor = mark;
    }
    this.dropAcknowledgedSegments();
  }

  private dropAcknowledgedSegments(): void {
    const mark = this.watermark();
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      if (s === this.active || s.endSeq > mark) continue;
      if (s.fd !== undefined) {
        try {
          fs.closeSync(s.fd);
        } catch {
          /* deleting anyway */
        }
        s.fd = undefined;
      }
      try {
        fs.unlinkSync(s.file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.log.warn('cannot delete an acknowledged segment', {
            file: s.file,
            error: (err as Error).message,
          });
          continue;
        }
      }
      this.diskBytes -= s.size;
      this.segments.splice(i--, 1);
    }
  }

  private readCursor(): number {
    const file = path.join(this.dir, CURSOR_FILE);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    if (/^\d{1,15}\n?$/.test(text)) return Number(text.trim());
    // Starting from 0 only resends acknowledged events, which the backend ignores by id.
    this.log.warn('event queue cursor is corrupt; resending every stored event', { file });
    return 0;
  }

  private recover(): void {
    const cursor = this.readCursor();
    this.savedCursor = cursor;
    const names = fs
      .readdirSync(this.dir)
      .filter((n) => SEGMENT_RE.test(n))
      .sort();
    let end = cursor;
    for (let i = 0; i < names.length; i++) {
      const file = path.join(this.dir, names[i]!);
      const firstSeq = Number(SEGMENT_RE.exec(names[i]!)![1]);
      const limit = i + 1 < names.length ? Number(SEGMENT_RE.exec(names[i + 1]!)![1]) : Infinity;
      const seg: Segment = { firstSeq, endSeq: firstSeq, file, size: 0, fd: undefined };
      const buf = fs.readFileSync(file);
      const scan = scanRecords(buf);
      let valid = scan.validBytes;
      let records = scan.records;
      if (firstSeq + records.length > limit) {
        records = records.slice(0, limit - firstSeq);
        valid = records.length
          ? records[records.length - 1]!.offset + records[records.length - 1]!.length
          : 0;
        this.log.warn('event queue segment overlaps the next one; ignoring its extra records', { file });
      }
      if (valid < buf.length) {
        this.log.warn('event queue segment has a torn or corrupt tail; truncating it', {
          file,
          problem: scan.problem ?? 'overlap',
          kept_bytes: valid,
          dropped_bytes: buf.length - valid,
        });
        try {
          fs.truncateSync(file, valid);
        } catch (err) {
          this.log.warn('cannot truncate the segment; its tail is ignored', {
            file,
            error: (err as Error).message,
          });
        }
      }
      seg.size = valid;
      seg.endSeq = firstSeq + records.length;
      this.segments.push(seg);
      records.forEach((r, k) => {
        const seq = firstSeq + k;
        if (seq < cursor) return;
        const id = eventId(r.payload);
        if (id === undefined) {
          this.log.warn('dropping an unreadable record from the event queue', { file, seq });
          return;
        }
        this.live.set(seq, { seq, id, seg, offset: r.offset, length: r.length });
      });
      end = Math.max(end, seg.endSeq);
    }
    this.nextSeq = end;
    // Segments without a record (or only acknowledged ones) go; what stays is counted as it is on
    // disk (a tail that could not be truncated still takes room).
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      if (s.endSeq === s.firstSeq || s.endSeq <= this.watermark()) {
        try {
          fs.unlinkSync(s.file);
          this.segments.splice(i--, 1);
        } catch {
          /* left in place, counted below */
        }
      }
    }
    for (const s of this.segments) {
      try {
        s.size = fs.statSync(s.file).size;
      } catch {
        /* counted as empty */
      }
      this.diskBytes += s.size;
    }
    // Appends always go to a fresh segment, never after a tail we just repaired.
    this.active = this.createSegment(this.nextSeq);
    if (this.live.size > 0)
      this.log.info('event queue read back', { queued: this.live.size, bytes: this.diskBytes });
  }
}

function eventId(payload: Buffer): string | undefined {
  try {
    const doc = JSON.parse(payload.toString('utf8')) as { id?: unknown };
    return doc && typeof doc === 'object' && typeof doc.id === 'string' && doc.id ? doc.id : undefined;
  } catch {
    return undefined;
  }
}
