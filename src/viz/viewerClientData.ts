/**
 * The viewer's script, part 1: helpers, and a session's data as the page holds it. A chunk
 * (see viewerBundle.ts) is unzipped by the browser (DecompressionStream) and its columns are
 * typed arrays over the unzipped buffer; record JSON, notes and messages stay one big string
 * each, cut into lines by offset and parsed only when shown. Live chunks (plain JSON from
 * `reloop serve`) are appended to the same structures.
 *
 * Rule for everything that came from the log: it enters the DOM through `textContent` (or as
 * numbers in SVG attributes), never as markup (test/viz/html.test.ts checks that the script
 * has no HTML sink at all). Plain modern JS in a string: it runs as is (no bundler, no CDN).
 */
export const VIEWER_JS_DATA = String.raw`
'use strict';
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
const M = JSON.parse($('reloop-data').textContent);
const CH = M.chart;
const reasonClass = (r) => (Object.hasOwn(CH.reasonClass, r) ? CH.reasonClass[r] : 'r-none');
const fmtInt = (n) => n.toLocaleString('en-US');
const fmtRel = (ms) => '+' + (ms / 1000).toFixed(3) + 's';
const fmtMs = (ms) => (ms < 1000 ? ms.toFixed(ms < 10 ? 2 : 1) + ' ms' : (ms / 1000).toFixed(2) + ' s');
const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** Lines of one big string (offsets computed once), plus lines that arrived live. */
class Lines {
  constructor(text, count) {
    this.text = text;
    this.base = count;
    this.extra = [];
    this.offs = new Int32Array(count + 1);
    let p = 0;
    for (let i = 0; i < count; i++) {
      this.offs[i] = p;
      const nl = text.indexOf('\n', p);
      p = nl < 0 ? text.length + 1 : nl + 1;
    }
    this.offs[count] = text.length + 1;
  }
  get length() { return this.base + this.extra.length; }
  get(i) { return i < this.base ? this.text.slice(this.offs[i], this.offs[i + 1] - 1) : this.extra[i - this.base]; }
  push(list) { for (const s of list) this.extra.push(s); }
  /** Calls hit(i) for every line the global regex matches, in order. */
  search(re, hit) {
    re.lastIndex = 0;
    let m;
    while (this.base > 0 && (m = re.exec(this.text)) !== null) {
      let lo = 0, hi = this.base - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (this.offs[mid] <= m.index) lo = mid; else hi = mid - 1; }
      hit(lo);
      if (lo + 1 >= this.base) break;
      re.lastIndex = this.offs[lo + 1];
    }
    for (let k = 0; k < this.extra.length; k++) { re.lastIndex = 0; if (re.test(this.extra[k])) hit(this.base + k); }
  }
}

async function decodeChunk(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const buf = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();
  const headLen = new DataView(buf).getUint32(0, true);
  const dec = new TextDecoder();
  const header = JSON.parse(dec.decode(new Uint8Array(buf, 4, headLen)));
  const base = (4 + headLen + 7) & ~7;
  const cols = {};
  for (const name of Object.keys(header.cols)) {
    const c = header.cols[name];
    cols[name] = c.kind === 'f64' ? new Float64Array(buf, base + c.offset, header.count) : new Int32Array(buf, base + c.offset, header.count);
  }
  const text = (t) => new Lines(dec.decode(new Uint8Array(buf, base + t.offset, t.bytes)), t.count);
  return { header, cols, lines: text(header.texts.lines), notes: text(header.texts.notes), msgs: text(header.texts.messages) };
}

/** One session of the page: its columns, texts, tables and what is derived from them on demand. */
class Session {
  constructor(info, d) {
    this.info = info;
    this.n = d.header.count;
    this.c = d.cols;
    this.lines = d.lines;
    this.notes = d.notes;
    this.msgs = d.msgs;
    this.t = { types: [], runs: [], reasons: [], tools: [], usages: [], turns: [], segs: [] };
    this.addTables(d.header.tables);
    this.meta = d.header.meta;
    this.parsedMsgs = new Map();
    this.effectsN = 0;
    this.effectOf = new Map();
    this.transitions = [];
  }
  addTables(t) {
    for (const k of ['types', 'runs', 'reasons', 'tools', 'usages', 'turns']) for (const v of t[k]) this.t[k].push(v);
    for (const [seg, msg] of t.segOps) (this.t.segs[seg] ??= []).push(msg);
  }
  /** A live chunk (JSON): records from this.n on. */
  apply(ch) {
    if (ch.first !== this.n) return false;
    for (const name of Object.keys(ch.cols)) {
      let a = this.c[name];
      if (a.length < this.n + ch.count) {
        const b = new a.constructor(Math.max(this.n + ch.count, a.length * 2, 64));
        b.set(a.subarray(0, this.n));
        a = this.c[name] = b;
      }
      a.set(ch.cols[name], this.n);
    }
    this.lines.push(ch.lines);
    this.notes.push(ch.notes);
    this.msgs.push(ch.messages);
    this.addTables(ch.tables);
    this.meta = ch.meta;
    this.n += ch.count;
    return true;
  }
  seq(i) { return this.c.seq[i]; }
  type(i) { return this.t.types[this.c.type[i]]; }
  record(i) { return JSON.parse(this.lines.get(i)); }
  message(k) {
    let m = this.parsedMsgs.get(k);
    if (!m) { m = JSON.parse(this.msgs.get(k)); this.parsedMsgs.set(k, m); }
    return m;
  }
  history(i) { return (this.t.segs[this.c.seg[i]] || []).slice(0, this.c.len[i]); }
  runLabel(r) { return r < 0 ? '-' : 'r' + (r + 1); }
  indexOfSeq(seq) {
    let lo = 0, hi = this.n - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.c.seq[mid] < seq) lo = mid + 1; else hi = mid; }
    return this.n && this.c.seq[lo] === seq ? lo : -1;
  }
  /** Transitions (record indices, in order) and, per fact, the transitions it triggered: built as records arrive. */
  derive() {
    for (let i = this.effectsN; i < this.n; i++) {
      if (this.c.edge[i] === -1) continue;
      this.transitions.push(i);
      const cause = this.c.cause[i];
      if (cause >= 0) { const l = this.effectOf.get(cause); if (l) l.push(i); else this.effectOf.set(cause, [i]); }
    }
    this.effectsN = this.n;
  }
  edgeEnds(i) {
    const e = this.c.edge[i];
    if (e >= 0) return [CH.edges[e].from, CH.edges[e].to];
    const r = this.record(i);
    return [r.data.from, r.data.to];
  }
}
`;
