import { gunzipSync } from 'node:zlib';
import type { ChunkHeader } from '../../src/viz/viewerBundle.ts';

const CHUNK = /<script type="application\/octet-stream" id="reloop-chunk-\d+">([A-Za-z0-9+/=]*)<\/script>/g;

/**
 * What a viewer page holds, as text: for every session in it, its records' JSON, their notes
 * and its messages' JSON, one per line — decoded as the page decodes its chunks. For tests
 * that check a page carries some log content (it is not readable in the file itself).
 */
export function pageText(html: string): string {
  const out: string[] = [];
  for (const [, b64] of html.matchAll(CHUNK)) {
    const buf = gunzipSync(Buffer.from(b64!, 'base64'));
    const headLen = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + headLen).toString('utf8')) as ChunkHeader;
    const base = (4 + headLen + 7) & ~7;
    for (const t of Object.values(header.texts))
      out.push(buf.subarray(base + t.offset, base + t.offset + t.bytes).toString('utf8'));
  }
  return out.join('\n');
}
