import { crc32 } from 'node:zlib';

// On-disk record: [payload length u32 BE][crc32 of payload u32 BE][payload]. The CRC is what lets a
// restart tell a torn or corrupted tail (crash mid-write, bad disk) from a real record.

export const HEADER_BYTES = 8;
/** An event larger than this is refused: the backend would refuse its frame anyway. */
export const MAX_RECORD_PAYLOAD = 1024 * 1024;

/** One payload framed as a record, ready to append. */
export function frameRecord(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(crc32(payload), 4);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** A record found by `scanRecords`: where its payload starts and how long it is. */
interface ScannedRecord {
  offset: number;
  length: number;
  payload: Buffer;
}

interface ScanResult {
  records: ScannedRecord[];
  /** Bytes of the valid prefix; anything after it is a torn or corrupt tail. */
  validBytes: number;
  /** Why scanning stopped early, when it did. */
  problem?: string;
}

/** Reads records until the end or the first one that is not whole and intact. */
export function scanRecords(buf: Buffer): ScanResult {
  const records: ScannedRecord[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < HEADER_BYTES)
      return { records, validBytes: pos, problem: `torn record header at byte ${pos}` };
    const length = buf.readUInt32BE(pos);
    const sum = buf.readUInt32BE(pos + 4);
    if (length === 0 || length > MAX_RECORD_PAYLOAD)
      return { records, validBytes: pos, problem: `bad record length ${length} at byte ${pos}` };
    if (buf.length - pos - HEADER_BYTES < length)
      return { records, validBytes: pos, problem: `torn record at byte ${pos}` };
    const payload = buf.subarray(pos + HEADER_BYTES, pos + HEADER_BYTES + length);
    if (crc32(payload) !== sum)
      return { records, validBytes: pos, problem: `checksum mismatch at byte ${pos}` };
    records.push({ offset: pos + HEADER_BYTES, length, payload });
    pos += HEADER_BYTES + length;
  }
  return { records, validBytes: pos };
}
