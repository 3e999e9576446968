// Unpacking of an asset archive (tar or tar.gz, sniffed by magic bytes) into an empty directory,
// refusing anything that could write or point outside it: absolute paths, `..` segments, links whose
// target leaves the directory (checked against the real file system, so chains of links count),
// device files and FIFOs. Symbolic links are created last so that no file write ever follows one.
import { createReadStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { createGunzip } from 'node:zlib';
import { AssetError } from './errors.ts';

const MAX_UNPACKED_BYTES = 4 * 1024 ** 3; // 4 GiB, against decompression bombs
const MAX_ENTRIES = 100_000;
const MAX_META_BYTES = 1024 * 1024; // GNU long names and pax headers
const MAX_LINK_HOPS = 40;
const BLOCK = 512;

type ArchiveKind = 'gzip' | 'tar';

/** The kind of archive by its first bytes, or undefined when it is neither gzip nor tar. */
export async function sniff(file: string): Promise<ArchiveKind | undefined> {
  const fh = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(BLOCK);
    const { bytesRead } = await fh.read(head, 0, BLOCK, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
    if (bytesRead >= 262 && head.toString('latin1', 257, 262) === 'ustar') return 'tar';
    return undefined;
  } finally {
    await fh.close();
  }
}

/** Reads exact byte counts from a stream of chunks. */
class Reader {
  private buf: Buffer = Buffer.alloc(0);
  private done = false;
  constructor(private readonly it: AsyncIterator<Buffer>) {}

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const r = await this.it.next();
    if (r.done) {
      this.done = true;
      return false;
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, r.value]) : r.value;
    return true;
  }

  /** Up to `max` bytes (at least 1), or null at the end of the stream. */
  async some(max: number): Promise<Buffer | null> {
    while (this.buf.length === 0) if (!(await this.fill())) return null;
    const n = Math.min(max, this.buf.length);
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async exact(n: number): Promise<Buffer | null> {
    while (this.buf.length < n) if (!(await this.fill())) return null;
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async skip(n: number): Promise<void> {
    while (n > 0) {
      const c = await this.some(n);
      if (!c) throw new AssetError('archive is truncated');
      n -= c.length;
    }
  }
}

interface Header {
  name: string;
  mode: number;
  size: number;
  type: string;
  linkname: string;
}

const cstr = (b: Buffer, off: number, len: number): string => {
  const s = b.subarray(off, off + len);
  const z = s.indexOf(0);
  return s.toString('utf8', 0, z < 0 ? len : z);
};

function numeric(b: Buffer, off: number, len: number): number {
  if (b[off]! & 0x80) {
    // GNU base-256
    let n = b[off]! & 0x7f;
    for (let i = 1; i < len; i++) n = n * 256 + b[off + i]!;
    return n;
  }
  const s = cstr(b, off, len).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new AssetError('not a tar archive (bad number in a header)');
  return parseInt(s, 8);
}

function parseHeader(b: Buffer): Header {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : b[i]!;
  if (numeric(b, 148, 8) !== sum) throw new AssetError('not a tar archive (header checksum mismatch)');
  let name = cstr(b, 0, 100);
  if (b.toString('latin1', 257, 262) === 'ustar') {
    const prefix = cstr(b, 345, 155);
    if (prefix) name = `${prefix}/${name}`;
  }
  const t = b[156]!;
  return {
    name,
    mode: numeric(b, 100, 8),
    size: numeric(b, 124, 12),
    type: t === 0 ? '0' : String.fromCharCode(t),
    linkname: cstr(b, 157, 100),
  };
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    const sp = data.indexOf(0x20, pos);
    const len = sp < 0 ? NaN : Number(data.toString('latin1', pos, sp));
    if (!Number.isInteger(len) || len <= 0 || pos + len > data.length)
      throw new AssetError('malformed pax header');
    const rec = data.toString('utf8', sp + 1, pos + len - 1);
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    pos += len;
  }
  return out;
}

/** Path segments of an entry name, or an error when it is absolute or climbs out. */
function segments(name: string, what: string): string[] {
  if (name.includes('\0')) throw new AssetError(`${what} has a NUL byte`);
  if (name.startsWith('/')) throw new AssetError(`${what} is an absolute path: ${name}`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new AssetError(`${what} leaves the asset directory: ${name}`);
  return parts;
}

/** Whether `parts` (relative to root) resolves inside root, following symbolic links as they are now. */
async function staysInside(root: string, parts: string[]): Promise<boolean> {
  const stack: string[] = [];
  const queue = [...parts];
  let hops = 0;
  while (queue.length > 0) {
    const c = queue.shift()!;
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (stack.length === 0) return false;
      stack.pop();
      continue;
    }
    const p = path.join(root, ...stack, c);
    const st = await fs.lstat(p).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) return false;
      const target = await fs.readlink(p);
      if (path.isAbsolute(target)) return false;
      queue.unshift(...target.split('/'));
      continue;
    }
    stack.push(c);
  }
  return true;
}

/** Unpacks `archive` into `dest` (an existing empty directory). Throws AssetError on anything unsafe. */
export async function unpack(archive: string, kind: ArchiveKind, dest: string): Promise<void> {
  const raw = createReadStream(archive);
  const stream = kind === 'gzip' ? raw.pipe(createGunzip()) : raw;
  if (kind === 'gzip') raw.on('error', (err) => stream.destroy(err));
  const reader = new Reader(stream[Symbol.asyncIterator]());
  try {
    await extract(reader, dest);
  } catch (err) {
    if (err instanceof AssetError) throw err;
    const code = String((err as NodeJS.ErrnoException).code ?? '');
    throw new AssetError(
      `unpacking: ${code.startsWith('Z_') ? 'corrupt gzip data: ' : ''}${(err as Error).message}`,
    );
  } finally {
    stream.destroy();
    raw.destroy();
  }
}

async function extract(reader: Reader, root: string): Promise<void> {
  const symlinks: Array<{ parts: string[]; target: string }> = [];
  let total = 0;
  let entries = 0;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  let first = true;

  for (;;) {
    const block = await reader.exact(BLOCK);
    if (!block) {
      if (first) throw new AssetError('not a tar archive (empty)');
      break; // tolerate a missing end-of-archive marker
    }
    if (block.every((x) => x === 0)) break;
    const h = parseHeader(block);
    first = false;
    if (++entries > MAX_ENTRIES) throw new AssetError(`archive has more than ${MAX_ENTRIES} entries`);
    const padding = (BLOCK - (h.size % BLOCK)) % BLOCK;

    if (h.type === 'L' || h.type === 'K' || h.type === 'x' || h.type === 'g') {
      if (h.size > MAX_META_BYTES) throw new AssetError('archive has an oversized name or pax header');
      const data = await reader.exact(h.size);
      if (!data) throw new AssetError('archive is truncated');
      await reader.skip(padding);
      if (h.type === 'L') longName = cstr(data, 0, data.length);
      else if (h.type === 'K') longLink = cstr(data, 0, data.length);
      else if (h.type === 'x') pax = parsePax(data);
      continue; // global pax headers carry nothing we use
    }

    const name = pax.path ?? longName ?? h.name;
    const linkname = pax.linkpath ?? longLink ?? h.linkname;
    const size = pax.size !== undefined ? Number(pax.size) : h.size;
    pax = {};
    longName = longLink = undefined;
    if (!Number.isSafeInteger(size) || size < 0) throw new AssetError(`archive entry ${name} has a bad size`);
    // Every byte read counts, also those of entries whose data is skipped.
    total += size;
    if (total > MAX_UNPACKED_BYTES)
      throw new AssetError(`archive unpacks to more than ${MAX_UNPACKED_BYTES} bytes`);
    const dataPadding = (BLOCK - (size % BLOCK)) % BLOCK;
    const parts = segments(name, `archive entry ${JSON.stringify(name)}`);
    const target = path.join(root, ...parts);

    switch (h.type) {
      case '0':
      case '7': {
        if (parts.length === 0) throw new AssetError('archive has a file entry without a name');
        await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
        const fh = await fs.open(
          target,
          fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW,
          0o600,
        );
        try {
          let left = size;
          while (left > 0) {
            const chunk = await reader.some(Math.min(left, 1 << 20));
            if (!chunk) throw new AssetError('archive is truncated');
            await fh.write(chunk);
            left -= chunk.length;
          }
          // Owner can always read and write; setuid, setgid and sticky bits are dropped.
          await fh.chmod((h.mode & 0o777) | 0o600);
        } finally {
          await fh.close();
        }
        await reader.skip(dataPadding);
        break;
      }
      case '5':
        await fs.mkdir(target, { recursive: true, mode: 0o755 });
        await reader.skip(size + dataPadding);
        break;
      case '1': {
        const from = segments(linkname, `hard link ${JSON.stringify(name)} -> ${JSON.stringify(linkname)}`);
        const src = path.join(root, ...from);
        const st = await fs.lstat(src).catch(() => undefined);
        if (!st?.isFile())
          throw new AssetError(`hard link ${name} points to ${linkname}, which is not a file of the archive`);
        await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
        await fs.link(src, target);
        await reader.skip(size + dataPadding);
        break;
      }
      case '2': {
        if (parts.length === 0) throw new AssetError('archive has a symbolic link without a name');
        const what = `symbolic link ${name} -> ${linkname}`;
        if (linkname === '' || linkname.includes('\0') || path.isAbsolute(linkname))
          throw new AssetError(`${what} points outside the asset directory`);
        const lexical = path.posix.normalize(path.posix.join(...parts.slice(0, -1), linkname));
        if (lexical === '..' || lexical.startsWith('../'))
          throw new AssetError(`${what} points outside the asset directory`);
        symlinks.push({ parts, target: linkname });
        await reader.skip(size + dataPadding);
        break;
      }
      case '3':
      case '4':
      case '6':
        throw new AssetError(`archive entry ${name} is a device file or FIFO, which assets may not contain`);
      default:
        throw new AssetError(`archive entry ${name} has an unsupported type ${JSON.stringify(h.type)}`);
    }
  }

  for (const l of symlinks) {
    const what = `symbolic link ${l.parts.join('/')} -> ${l.target}`;
    if (!(await staysInside(root, l.parts.slice(0, -1))))
      throw new AssetError(`${what} lies under a link that points outside the asset directory`);
    const at = path.join(root, ...l.parts);
    await fs.mkdir(path.dirname(at), { recursive: true, mode: 0o755 });
    await fs.symlink(l.target, at);
  }
  // Links may only point outside in combination (a link through another link), so check them all
  // against the finished tree.
  for (const l of symlinks) {
    if (!(await staysInside(root, l.parts)))
      throw new AssetError(
        `symbolic link ${l.parts.join('/')} -> ${l.target} points outside the asset directory`,
      );
  }
}
