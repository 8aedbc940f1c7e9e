import { gzipSync } from 'node:zlib';
import { COLUMNS, type ViewerChunk } from './viewerIndex.ts';

/**
 * How a chunk travels inside the page: one binary container, gzipped, in base64 (so the text
 * of a `<script type="application/octet-stream">` element holds only `A–Z a–z 0–9 + / =`,
 * nothing the HTML parser could take for markup — log content is not even visible in the
 * file). The page unzips it with the browser's own DecompressionStream and reads the columns
 * as typed arrays straight from the buffer: nothing is parsed per record at load; a record's
 * JSON is parsed only when the page shows it.
 *
 * Layout: u32 (LE) length of a JSON header, the header, zero padding to a multiple of 8, then
 * the sections the header points at (offsets relative to that aligned start): one Int32Array
 * per column (Float64Array for `at`), and three texts with one entry per line — the records'
 * JSON, their notes, the pooled messages' JSON (none of which can contain a raw newline).
 */
export interface ChunkHeader {
  v: 1;
  first: number;
  count: number;
  cols: Record<string, { offset: number; kind: 'i32' | 'f64' }>;
  texts: Record<'lines' | 'notes' | 'messages', { offset: number; bytes: number; count: number }>;
  tables: ViewerChunk['tables'];
  meta: ViewerChunk['meta'];
}

const align8 = (n: number) => (n + 7) & ~7;

export function encodeChunk(chunk: ViewerChunk, level = 6): string {
  const parts: Buffer[] = [];
  let offset = 0;
  const cols: ChunkHeader['cols'] = {};
  for (const name of COLUMNS) {
    const kind = name === 'at' ? 'f64' : 'i32';
    const values = chunk.cols[name];
    const arr = kind === 'f64' ? Float64Array.from(values) : Int32Array.from(values);
    const buf = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
    cols[name] = { offset, kind };
    parts.push(buf);
    offset += buf.length;
    const pad = align8(offset) - offset;
    if (pad) parts.push(Buffer.alloc(pad));
    offset += pad;
  }
  const text = (lines: readonly string[]) => {
    const buf = Buffer.from(lines.join('\n'), 'utf8');
    const at = { offset, bytes: buf.length, count: lines.length };
    parts.push(buf);
    offset += buf.length;
    return at;
  };
  const texts = { lines: text(chunk.lines), notes: text(chunk.notes), messages: text(chunk.messages) };
  const header: ChunkHeader = {
    v: 1,
    first: chunk.first,
    count: chunk.count,
    cols,
    texts,
    tables: chunk.tables,
    meta: chunk.meta,
  };
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(align8(4 + head.length));
  prefix.writeUInt32LE(head.length, 0);
  head.copy(prefix, 4);
  return gzipSync(Buffer.concat([prefix, ...parts]), { level }).toString('base64');
}
