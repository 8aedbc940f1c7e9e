/**
 * The viewer's script, part 2: the chart (marked for the selected record; a click on a state
 * or an edge filters the timeline to it) and the timeline — every record, filtered by type,
 * reason, tool, text and the chart, in a virtual list (only the rows in view exist, so 100 000
 * records cost what 40 do). Same rule as part 1: log data goes in through textContent only.
 */
export const VIEWER_JS_TIMELINE = String.raw`
let S = null;
let cur = -1;
const F = { type: -1, reason: -1, tool: -1, text: '', chart: null };
let view = null;
let viewN = 0;

// ---- chart
const charts = [...document.querySelectorAll('svg.chart')].map((svg) => ({
  svg,
  view: svg.dataset.view,
  edges: [...svg.querySelectorAll('g.edge')].map((g) => ({ g, edges: g.dataset.edges.split(' ').map(Number) })),
  labels: [...svg.querySelectorAll('text.edge-label')].map((t) => ({
    t, edges: t.dataset.edges.split(' ').map(Number), count: t.querySelector('.count'),
  })),
  states: [...svg.querySelectorAll('g.state')],
}));
let chartView = 'overview';
const chartNow = () => charts.find((c) => c.view === chartView);
const sum = (edges, counts) => edges.reduce((n, e) => n + counts[e], 0);

function markChart(i) {
  const ch = chartNow();
  S.derive();
  const counts = new Int32Array(CH.edges.length);
  const visited = new Set();
  let last = -1;
  for (const j of S.transitions) {
    if (j > i) break;
    const e = S.c.edge[j];
    last = e;
    if (e < 0) continue;
    counts[e]++;
    visited.add(CH.edges[e].from);
    visited.add(CH.edges[e].to);
  }
  for (const { g, edges } of ch.edges) {
    g.classList.toggle('taken', sum(edges, counts) > 0);
    g.classList.toggle('last', edges.includes(last));
  }
  for (const { t, edges, count } of ch.labels) {
    const n = sum(edges, counts);
    t.classList.toggle('taken', n > 0);
    t.classList.toggle('last', edges.includes(last));
    count.textContent = n > 0 ? ' ×' + n : '';
  }
  const current = S.c.state[i] >= 0 ? CH.states[S.c.state[i]] : null;
  for (const g of ch.states) {
    g.classList.toggle('current', g.dataset.state === current);
    g.classList.toggle('visited', visited.has(g.dataset.state));
  }
  $('chart-sub').textContent = 'edges taken up to seq ' + S.seq(i) + (current ? ' · now in ' + current : '');
}

function markPicked() {
  const sel = F.chart;
  const hit = (edges) => sel && sel.kind === 'edges' && edges.some((e) => sel.edges.includes(e));
  for (const ch of charts) {
    for (const g of ch.states) g.classList.toggle('picked', !!sel && sel.kind === 'state' && g.dataset.state === sel.state);
    for (const { g, edges } of ch.edges) g.classList.toggle('picked', hit(edges));
    for (const { t, edges } of ch.labels) t.classList.toggle('picked', hit(edges));
  }
  const chip = $('f-chart');
  chip.hidden = !sel;
  if (sel) chip.textContent = (sel.kind === 'state' ? 'state: ' + sel.state : 'edge: ' + sel.name) + '  ✕';
}

function pick(sel) {
  const same = F.chart && sel && F.chart.kind === sel.kind && F.chart.name === sel.name;
  F.chart = same ? null : sel;
  markPicked();
  refilter();
}

for (const ch of charts) {
  ch.svg.addEventListener('click', (ev) => {
    const label = ev.target.closest('text.edge-label');
    const edge = ev.target.closest('g.edge');
    const state = ev.target.closest('g.state');
    const reasons = (edges) => [...new Set(edges.map((e) => CH.edges[e].reason))].join(', ');
    if (label) {
      const edges = label.dataset.edges.split(' ').map(Number);
      pick({ kind: 'edges', edges, name: CH.edges[edges[0]].from + ' → ' + CH.edges[edges[0]].to + ' (' + reasons(edges) + ')' });
    } else if (edge) {
      const edges = edge.dataset.edges.split(' ').map(Number);
      pick({ kind: 'edges', edges, name: edge.dataset.from + ' → ' + edge.dataset.to });
    } else if (state) {
      pick({ kind: 'state', state: state.dataset.state, name: state.dataset.state });
    }
  });
}
for (const b of document.querySelectorAll('#chart-views button')) {
  b.addEventListener('click', () => {
    chartView = b.dataset.view;
    for (const ch of charts) ch.svg.toggleAttribute('hidden', ch.view !== chartView);
    for (const o of document.querySelectorAll('#chart-views button')) o.classList.toggle('on', o === b);
    if (S && cur >= 0) markChart(cur);
  });
}

// ---- filters
const escapeRe = (s) => s.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&');
function fillSelect(sel, label, names, col) {
  const counts = new Int32Array(names.length);
  for (let i = 0; i < S.n; i++) if (S.c[col][i] >= 0) counts[S.c[col][i]]++;
  const keep = sel.value;
  sel.replaceChildren(el('option', null, label));
  sel.firstChild.value = '-1';
  const order = names.map((n, k) => k).sort((a, b) => (names[a] < names[b] ? -1 : 1));
  for (const k of order) {
    const o = el('option', null, names[k] + ' (' + fmtInt(counts[k]) + ')');
    o.value = String(k);
    sel.append(o);
  }
  sel.value = keep && [...sel.options].some((o) => o.value === keep) ? keep : '-1';
}
function fillFilters() {
  fillSelect($('f-type'), 'all record types', S.t.types, 'type');
  fillSelect($('f-reason'), 'any reason', S.t.reasons, 'reason');
  fillSelect($('f-tool'), 'any tool', S.t.tools, 'tool');
}

function refilter() {
  const n = S.n;
  const c = S.c;
  const chart = F.chart;
  if (F.type < 0 && F.reason < 0 && F.tool < 0 && !F.text && !chart) {
    view = null;
    viewN = n;
  } else {
    let textHit = null;
    if (F.text) {
      textHit = new Uint8Array(n);
      const re = new RegExp(escapeRe(F.text), 'gi');
      const mark = (i) => { textHit[i] = 1; };
      S.lines.search(re, mark);
      S.notes.search(re, mark);
    }
    const edges = chart && chart.kind === 'edges' ? new Set(chart.edges) : null;
    const st = chart && chart.kind === 'state' ? CH.states.indexOf(chart.state) : -2;
    const out = new Int32Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      if (F.type >= 0 && c.type[i] !== F.type) continue;
      if (F.reason >= 0 && c.reason[i] !== F.reason) continue;
      if (F.tool >= 0 && c.tool[i] !== F.tool) continue;
      if (textHit && !textHit[i]) continue;
      if (edges && !edges.has(c.edge[i])) continue;
      // A state: the records while the loop was in it, and the transition that left it.
      if (st > -2 && c.state[i] !== st && !(c.edge[i] !== -1 && i > 0 && c.state[i - 1] === st)) continue;
      out[k++] = i;
    }
    view = out.subarray(0, k);
    viewN = k;
  }
  $('tl-count').textContent = (view ? fmtInt(viewN) + ' of ' : '') + fmtInt(n) + ' records';
  $('tl-empty').hidden = viewN > 0;
  renderRows();
  scrollToCur();
}
let textTimer = 0;
$('f-text').addEventListener('input', () => {
  clearTimeout(textTimer);
  textTimer = setTimeout(() => { F.text = $('f-text').value; refilter(); }, 120);
});
for (const [id, key] of [['f-type', 'type'], ['f-reason', 'reason'], ['f-tool', 'tool']])
  $(id).addEventListener('change', () => { F[key] = Number($(id).value); refilter(); });
$('f-chart').addEventListener('click', () => pick(null));
$('f-clear').addEventListener('click', () => {
  F.type = F.reason = F.tool = -1;
  F.text = '';
  F.chart = null;
  $('f-text').value = '';
  for (const id of ['f-type', 'f-reason', 'f-tool']) $(id).value = '-1';
  markPicked();
  refilter();
});

// ---- the virtual list
const ROW_H = 22;
const box = $('tl-scroll');
const rowsEl = $('tl-rows');
const rowPool = [];
const rowAt = (k) => (view ? view[k] : k);
/** Position in the list of record i, or of the last listed record before it (−1: none). */
function posOf(i) {
  if (!view) return Math.min(i, viewN - 1);
  let lo = 0, hi = viewN - 1, found = -1;
  while (lo <= hi) { const mid = (lo + hi) >> 1; if (view[mid] <= i) { found = mid; lo = mid + 1; } else hi = mid - 1; }
  return found;
}
function typeClass(type) {
  if (type.startsWith('model.')) return type === 'model.failed' ? 't-err' : 't-model';
  if (type.startsWith('tool.') || type === 'permission.decided' || type === 'hook.decided') return 't-tool';
  if (type === 'message.appended' || type === 'user.message' || type === 'compaction.finished') return 't-msg';
  if (type.startsWith('run.') || type === 'session.created') return 't-run';
  if (type === 'actor.failed' || type === 'abort.requested') return 't-err';
  return '';
}
function makeRow() {
  const r = { el: el('div', 'row'), i: -1 };
  for (const k of ['seq', 'time', 'rt', 'kind', 'text', 'badge']) { r[k] = el('span', k === 'seq' || k === 'time' ? 'num' : k); r.el.append(r[k]); }
  r.el.addEventListener('click', () => go(r.i, 'timeline'));
  return r;
}
function badgeOf(i, type) {
  const fork = S.meta.forkedFrom;
  if (fork && S.seq(i) === fork.seq) return ['fork', '⑂ fork point: copied from ' + clip(fork.session, 18) + ' up to here'];
  if (type === 'run.started') return ['run', '▶ ' + S.runLabel(S.c.run[i]) + ' starts'];
  if (type === 'run.ended') return ['run', '■ ' + S.runLabel(S.c.run[i]) + ' ends'];
  if (type === 'session.created' && S.meta.parent) return ['child', '↰ child of ' + clip(S.meta.parent.session, 18)];
  if (childByToolUse.size && SUBAGENT_TYPES.has(type)) {
    const child = childByToolUse.get(S.record(i).data.toolUseId);
    if (child !== undefined) return ['child', '↳ child session ' + clip(M.sessions[child].id, 18)];
  }
  return null;
}
/** Records of a Task call: each links to the child session it started (when the page holds it). */
const SUBAGENT_TYPES = new Set(['tool.started', 'child.started', 'child.finished', 'tool.finished']);
let causeOfCur = -1;
let effectsOfCur = [];
function fillRow(r, i) {
  r.i = i;
  const c = S.c;
  const type = S.type(i);
  r.seq.textContent = String(c.seq[i]);
  r.time.textContent = fmtRel(c.at[i]);
  const turn = c.turn[i] >= 0 ? S.t.turns[c.turn[i]] : null;
  r.rt.textContent = S.runLabel(c.run[i]) + (turn ? ' t' + turn.turn : '');
  if (c.edge[i] !== -1) {
    const reason = S.t.reasons[c.reason[i]];
    r.kind.textContent = reason + (c.edge[i] === -2 ? ' (no such edge)' : '');
    r.kind.className = 'kind ' + reasonClass(reason);
    const [from, to] = S.edgeEnds(i);
    r.text.replaceChildren(el('b', null, from), ' → ', el('b', null, to));
  } else {
    r.kind.textContent = type;
    r.kind.className = 'kind ' + typeClass(type);
    r.text.textContent = S.notes.get(i);
  }
  const badge = badgeOf(i, type);
  r.badge.className = badge ? 'badge ' + badge[0] : 'badge-none';
  r.badge.textContent = badge ? badge[1] : '';
  const cl = r.el.classList;
  cl.toggle('sel', i === cur);
  cl.toggle('future', i > cur);
  cl.toggle('cause', i === causeOfCur);
  cl.toggle('effect', effectsOfCur.includes(i));
  cl.toggle('b-run', type === 'run.started');
  cl.toggle('b-end', type === 'run.ended');
  cl.toggle('b-fork', !!S.meta.forkedFrom && S.seq(i) === S.meta.forkedFrom.seq);
  r.el.title = 'seq ' + c.seq[i] + ' · ' + type + (c.run[i] >= 0 ? ' · run ' + S.t.runs[c.run[i]] : '');
}
function renderRows() {
  $('tl-spacer').style.height = viewN * ROW_H + 'px';
  const first = Math.max(0, Math.floor(box.scrollTop / ROW_H) - 4);
  const last = Math.min(viewN, Math.ceil((box.scrollTop + box.clientHeight) / ROW_H) + 4);
  rowsEl.style.transform = 'translateY(' + first * ROW_H + 'px)';
  while (rowPool.length < last - first) { const r = makeRow(); rowPool.push(r); rowsEl.append(r.el); }
  for (let k = 0; k < rowPool.length; k++) {
    const r = rowPool[k];
    r.el.hidden = first + k >= last;
    if (!r.el.hidden) fillRow(r, rowAt(first + k));
  }
}
function scrollToCur() {
  const k = posOf(cur);
  if (k < 0) return;
  const y = k * ROW_H;
  if (y < box.scrollTop + ROW_H) box.scrollTop = Math.max(0, y - 2 * ROW_H);
  else if (y + 2 * ROW_H > box.scrollTop + box.clientHeight) box.scrollTop = y - box.clientHeight + 3 * ROW_H;
  renderRows();
}
let scrollQueued = false;
box.addEventListener('scroll', () => {
  if (scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => { scrollQueued = false; renderRows(); });
});
/** Previous / next row of the (filtered) timeline. */
function stepRow(dir) {
  const k = posOf(cur);
  const next = view ? (dir > 0 ? (k < 0 ? 0 : k + 1) : k - (rowAt(k) === cur ? 1 : 0)) : cur + dir;
  if (next >= 0 && next < viewN) go(rowAt(next));
}
`;
