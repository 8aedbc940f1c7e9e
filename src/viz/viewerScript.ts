/**
 * The viewer's script, core part: reads the embedded JSON, drives the step slider, re-marks
 * the chart, the timeline and the messages for the selected record. Rule for everything that
 * came from the log: it enters the DOM through `textContent` (or as SVG numbers), never as
 * markup, so tool output stays text whatever it contains (test/viz/html.test.ts checks there is
 * no HTML sink in this script at all). Plain modern JS in a string: it runs as is in the page
 * (no bundler, no CDN, works offline).
 */
export const VIEWER_SCRIPT_CORE = String.raw`
'use strict';
const D = JSON.parse(document.getElementById('reloop-data').textContent);
const S = D.steps;
const N = S.seq.length;
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function svgEl(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
  return e;
}
/** Scrolls a panel (not the page) so that child is in view. */
function scrollWithin(box, child) {
  const b = box.getBoundingClientRect();
  const c = child.getBoundingClientRect();
  if (c.top < b.top + 28) box.scrollTop += c.top - b.top - 28;
  else if (c.bottom > b.bottom) box.scrollTop += c.bottom - b.bottom + 4;
}
const reasonClass = (r) => (Object.hasOwn(D.reasonClass, r) ? D.reasonClass[r] : 'r-none');
const fmtRel = (ms) => '+' + (ms / 1000).toFixed(3) + 's';
const fmtClock = (ms) => new Date(D.session.t0 + ms).toISOString().slice(11, 23);
const fmtInt = (n) => n.toLocaleString('en-US');
const stepOfSeq = new Map(S.seq.map((s, i) => [s, i]));
const TL = D.timeline;
/** For each step, the index in TL of the last transition at or before it (-1: none yet). */
const lastTransitionAt = new Int32Array(N);
{
  let j = -1;
  for (let i = 0; i < N; i++) {
    while (j + 1 < TL.length && TL[j + 1].seq <= S.seq[i]) j++;
    lastTransitionAt[i] = j;
  }
}

// ---- chart: cache the marked pieces once
const chart = document.querySelector('svg.chart');
const edgeGroups = [...chart.querySelectorAll('g.edge')].map((g) => ({
  g, edges: g.getAttribute('data-edges').split(' ').map(Number),
}));
const edgeLabels = [...chart.querySelectorAll('text.edge-label')].map((t) => ({
  t, edge: Number(t.getAttribute('data-edge')), count: t.querySelector('.count'),
}));
const stateNodes = [...chart.querySelectorAll('g.state')];
function markChart(i) {
  const counts = new Int32Array(D.edges.length);
  const upTo = lastTransitionAt[i];
  for (let j = 0; j <= upTo; j++) if (TL[j].edge >= 0) counts[TL[j].edge]++;
  const last = upTo >= 0 ? TL[upTo].edge : -1;
  const visited = new Set();
  for (let j = 0; j <= upTo; j++) { visited.add(TL[j].from); visited.add(TL[j].to); }
  for (const { g, edges } of edgeGroups) {
    g.classList.toggle('taken', edges.some((e) => counts[e] > 0));
    g.classList.toggle('last', edges.includes(last));
  }
  for (const { t, edge, count } of edgeLabels) {
    t.classList.toggle('taken', counts[edge] > 0);
    t.classList.toggle('last', edge === last);
    count.textContent = counts[edge] > 0 ? ' ×' + counts[edge] : '';
  }
  const current = S.state[i] >= 0 ? D.states[S.state[i]] : null;
  for (const g of stateNodes) {
    const id = g.getAttribute('data-state');
    g.classList.toggle('current', id === current);
    g.classList.toggle('visited', visited.has(id));
  }
  $('chart-sub').textContent = 'edges taken up to seq ' + S.seq[i] + (current ? ' · now in ' + current : '');
}

// ---- timeline (runs are numbered in the table: real run ids are long; the row tooltip has them)
const runNo = new Map(S.runs.map((r, i) => [r, i + 1]));
const runLabel = (r) => (r === null ? '-' : 'r' + (runNo.get(r) ?? '?'));
const rows = TL.map((t, j) => {
  const tr = el('tr');
  const step = stepOfSeq.get(t.seq);
  tr.append(el('td', 'num', t.seq), el('td', 'num', fmtRel(S.at[step] ?? 0)),
    el('td', 'num', runLabel(t.run) + ' t' + t.turn));
  const path = el('td', 'path');
  path.append(el('b', null, t.from), ' → ', el('b', null, t.to));
  const reason = el('td', reasonClass(t.reason), t.reason);
  if (t.edge < 0) reason.append(' (no such edge)');
  tr.append(path, reason);
  tr.title = 'run ' + (t.run ?? '-') + ' · ' + fmtClock(S.at[step] ?? 0) + '\n' + t.trigger +
    (t.edge >= 0 ? '\n' + D.edges[t.edge].id : '');
  tr.addEventListener('click', () => go(step));
  tr.dataset.index = String(j);
  $('timeline-body').append(tr);
  return tr;
});
let selectedRow = null;
let futureFrom = TL.length;
function markTimeline(i) {
  const upTo = lastTransitionAt[i];
  // Only the rows between the old and the new position change.
  for (let j = Math.min(futureFrom, upTo + 1); j < Math.max(futureFrom, upTo + 1); j++)
    rows[j].classList.toggle('future', j > upTo);
  futureFrom = upTo + 1;
  if (selectedRow) selectedRow.classList.remove('selected');
  selectedRow = upTo >= 0 ? rows[upTo] : null;
  if (selectedRow) {
    selectedRow.classList.add('selected');
    scrollWithin($('timeline-scroll'), selectedRow);
  }
}

// ---- messages as of the step
const LONG = 1500;
function textBlock(parent, kind, text, cls, err) {
  const b = el('div', 'block');
  b.append(el('div', 'kind' + (err ? ' err' : ''), kind));
  const pre = el('pre', cls || null);
  const s = String(text);
  pre.textContent = s.length > LONG ? s.slice(0, LONG) + '…' : s;
  b.append(pre);
  if (s.length > LONG) {
    const more = el('button', 'more', 'show all ' + fmtInt(s.length) + ' characters');
    more.addEventListener('click', () => { pre.textContent = s; more.remove(); });
    b.append(more);
  }
  parent.append(b);
}
const asText = (c) => typeof c === 'string' ? c
  : c.map((x) => x.type === 'text' ? x.text : JSON.stringify(x, null, 2)).join('\n');
function renderContent(parent, content) {
  if (typeof content === 'string') return textBlock(parent, 'text', content);
  if (content.length === 0) return textBlock(parent, 'empty', '');
  for (const b of content) {
    if (b.type === 'text') textBlock(parent, 'text', b.text);
    else if (b.type === 'thinking') textBlock(parent, 'thinking', b.thinking, 'thinking');
    else if (b.type === 'redacted_thinking') textBlock(parent, 'redacted thinking', '[redacted]', 'thinking');
    else if (b.type === 'tool_use') textBlock(parent, 'tool_use ▸ ' + b.name + ' · ' + b.id, JSON.stringify(b.input, null, 2));
    else if (b.type === 'tool_result')
      textBlock(parent, 'tool_result ◂ ' + b.tool_use_id + (b.is_error ? ' · is_error' : ''), asText(b.content), null, b.is_error);
    else textBlock(parent, b.type, JSON.stringify(b, null, 2));
  }
}
const historyAt = (i) => S.segments[S.seg[i]].slice(0, S.len[i]);
function messageCard(id, k) {
  const m = S.messages[id];
  const card = el('div', 'msg ' + (m.role === 'user' ? 'user' : 'assistant'));
  const head = el('div', 'msg-head');
  head.append(el('span', null, '#' + (k + 1)), el('span', 'role', m.role), el('span', null, m.origin));
  card.append(head);
  renderContent(card, m.content);
  return card;
}
/**
 * Steps usually move the history by a message or two: cards are added or removed at the end,
 * and only a compaction (a new segment) redraws the list. Keeps dragging the slider smooth on
 * long sessions.
 */
let shownSeg = -1;
let cards = [];
let marked = [];
function markMessages(i) {
  const seg = S.seg[i];
  const len = S.len[i];
  $('messages-sub').textContent = len + ' messages as of seq ' + S.seq[i];
  const box = $('messages');
  if (seg !== shownSeg) { box.replaceChildren(); cards = []; shownSeg = seg; }
  while (cards.length > len) cards.pop().remove();
  const ids = S.segments[seg];
  while (cards.length < len) { const c = messageCard(ids[cards.length], cards.length); cards.push(c); box.append(c); }
  box.querySelector(':scope > .empty')?.remove();
  if (len === 0) box.append(el('div', 'empty', 'no messages yet'));
  for (const c of marked) { c.classList.remove('new'); c.querySelector('.tag')?.remove(); }
  marked = [];
  if (i > 0) {
    const sameSeg = S.seg[i - 1] === seg;
    const before = sameSeg ? null : new Set(historyAt(i - 1));
    for (let k = sameSeg ? S.len[i - 1] : 0; k < len; k++) {
      if (before && before.has(ids[k])) continue;
      cards[k].classList.add('new');
      cards[k].firstChild.append(el('span', 'tag', 'new at this step'));
      marked.push(cards[k]);
    }
  }
  const target = marked[0] ?? cards[len - 1];
  if (target) scrollWithin(box, target);
}
`;
