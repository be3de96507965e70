// A zip writer that writes whatever it is told, for the malformed archives the reader must refuse: one field
// per defect, everything else as a well-formed archive has it.
import { crc32, deflateRawSync } from 'node:zlib';

export interface RogueEntry {
  name: string | Uint8Array;
  data: Uint8Array;
  /** 0 stored, 8 deflate (the data is deflated here); any other value is written as is, data stored. */
  method?: number;
  /** The bytes written as the entry's data instead of the (deflated) data. */
  payload?: Uint8Array;
  flags?: number;
  /** Central-directory overrides. */
  crc?: number;
  csize?: number;
  usize?: number;
  offset?: number;
  /** Local-header overrides. */
  localName?: string;
  localFlags?: number;
  localMethod?: number;
  localCrc?: number;
  localCsize?: number;
  localUsize?: number;
}

export interface RogueOptions {
  count?: number;
  cdSize?: number;
  cdOffset?: number;
  disk?: number;
  comment?: Uint8Array;
  /** Declared comment length (default: the comment's). */
  commentLength?: number;
  /** Bytes before the archive; offsets stay relative to the archive (`cat stub a.zip`). */
  prefix?: Uint8Array;
  suffix?: Uint8Array;
}

const bytesOf = (n: string | Uint8Array): Uint8Array => (typeof n === 'string' ? Buffer.from(n, 'utf8') : n);

export function rogueZip(entries: RogueEntry[], o: RogueOptions = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const method = e.method ?? 0;
    const payload = e.payload ?? (method === 8 ? deflateRawSync(e.data) : e.data);
    const name = bytesOf(e.name);
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.localFlags ?? e.flags ?? 0x0800, 6);
    local.writeUInt16LE(e.localMethod ?? method, 8);
    local.writeUInt16LE(0x0021, 12);
    local.writeUInt32LE(e.localCrc ?? e.crc ?? crc, 14);
    local.writeUInt32LE(e.localCsize ?? e.csize ?? payload.length, 18);
    local.writeUInt32LE(e.localUsize ?? e.usize ?? e.data.length, 22);
    const localName = e.localName === undefined ? name : bytesOf(e.localName);
    local.writeUInt16LE(localName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(e.flags ?? 0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0x0021, 14);
    central.writeUInt32LE(e.crc ?? crc, 16);
    central.writeUInt32LE(e.csize ?? payload.length, 20);
    central.writeUInt32LE(e.usize ?? e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(e.offset ?? offset, 42);
    locals.push(local, Buffer.from(localName), Buffer.from(payload));
    centrals.push(central, Buffer.from(name));
    offset += 30 + localName.length + payload.length;
  }
  const cd = Buffer.concat(centrals);
  const comment = o.comment ?? new Uint8Array(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(o.disk ?? 0, 4);
  end.writeUInt16LE(o.count ?? entries.length, 8);
  end.writeUInt16LE(o.count ?? entries.length, 10);
  end.writeUInt32LE(o.cdSize ?? cd.length, 12);
  end.writeUInt32LE(o.cdOffset ?? offset, 16);
  end.writeUInt16LE(o.commentLength ?? comment.length, 20);
  return Buffer.concat([
    o.prefix ?? new Uint8Array(0),
    ...locals,
    cd,
    end,
    comment,
    o.suffix ?? new Uint8Array(0),
  ]);
}
