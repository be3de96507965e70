import { crc32, deflateRawSync } from 'node:zlib';

// A small zip writer for tests: well-formed zips, and zips with exactly one defect (a field of the local header,
// the central directory or the data descriptor overridden). Our own generator; nothing here is hand-edited bytes.

interface Fields {
  name: string;
  method: number;
  flags: number;
  crc: number;
  csize: number;
  usize: number;
}

export interface ZipEntrySpec {
  name: string;
  data?: Uint8Array | string;
  /** 0 stored, 8 deflate (default 8). */
  method?: 0 | 8;
  /** Local crc and sizes zero, a signed data descriptor after the data (flag bit 3). */
  descriptor?: boolean;
  /** Overrides of the local header. */
  local?: Partial<Fields>;
  /** Overrides of the central directory record, and the local header offset it points to. */
  central?: Partial<Fields & { offset: number }>;
  /** Overrides of the data descriptor. */
  descriptorValues?: Partial<Pick<Fields, 'crc' | 'csize' | 'usize'>>;
  /** Extra bytes appended to the entry's stored data (after what the sizes cover). */
  trailing?: Uint8Array;
}

const UTF8 = 0x0800;
const DESCRIPTOR = 0x0008;

function header(sig: number, f: Fields, name: Buffer, central: boolean, offset: number): Buffer {
  const b = Buffer.alloc(central ? 46 : 30);
  let at = 0;
  const u32 = (v: number) => (at = b.writeUInt32LE(v >>> 0, at));
  const u16 = (v: number) => (at = b.writeUInt16LE(v, at));
  u32(sig);
  if (central) u16(20);
  u16(20);
  u16(f.flags);
  u16(f.method);
  u16(0); // time
  u16(0x21); // date 1980-01-01
  u32(f.crc);
  u32(f.csize);
  u32(f.usize);
  u16(name.length);
  u16(0); // extra
  if (central) {
    u16(0); // comment
    u16(0); // disk
    u16(0); // internal attributes
    u32(0); // external attributes
    u32(offset);
  }
  return Buffer.concat([b, name]);
}

/** A zip of `entries`, in order. */
export function buildZip(entries: readonly ZipEntrySpec[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const raw = typeof e.data === 'string' ? Buffer.from(e.data) : Buffer.from(e.data ?? new Uint8Array());
    const method = e.method ?? 8;
    const stored = method === 8 ? deflateRawSync(raw) : raw;
    const real: Fields = {
      name: e.name,
      method,
      flags: UTF8 | (e.descriptor === true ? DESCRIPTOR : 0),
      crc: crc32(raw),
      csize: stored.length,
      usize: raw.length,
    };
    const localFields = e.descriptor === true ? { ...real, crc: 0, csize: 0, usize: 0 } : real;
    const lf = { ...localFields, ...e.local };
    const cf = { ...real, ...e.central };
    const local = header(0x04034b50, lf, Buffer.from(lf.name), false, 0);
    const pieces = [local, stored];
    if (e.descriptor === true) {
      const d = { crc: real.crc, csize: real.csize, usize: real.usize, ...e.descriptorValues };
      const desc = Buffer.alloc(16);
      desc.writeUInt32LE(0x08074b50, 0);
      desc.writeUInt32LE(d.crc >>> 0, 4);
      desc.writeUInt32LE(d.csize, 8);
      desc.writeUInt32LE(d.usize, 12);
      pieces.push(desc);
    }
    if (e.trailing) pieces.push(Buffer.from(e.trailing));
    central.push(header(0x02014b50, cf, Buffer.from(cf.name), true, e.central?.offset ?? offset));
    for (const p of pieces) {
      parts.push(p);
      offset += p.length;
    }
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}
