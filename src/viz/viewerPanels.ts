/**
 * The viewer's script, second part: header, step details, usage, tokens per turn (an SVG bar
 * chart built with createElementNS), the stepper and the keyboard. Same rule as the core:
 * log data goes in through textContent only.
 */
export const VIEWER_SCRIPT_PANELS = `
// ---- header
document.title = 'reloop · ' + (D.session.title || D.session.id);
$('title').textContent = D.session.title || '(untitled session)';
$('session-meta').textContent = D.session.id + ' · ' + fmtInt(D.session.records) + ' records · ' +
  TL.length + ' transitions' + (D.session.cwd ? ' · ' + D.session.cwd : '') +
  (D.session.forkedFrom ? ' · forked from ' + D.session.forkedFrom.session + '@' + D.session.forkedFrom.seq : '');
for (const r of D.runs) {
  const chip = el('button', 'chip ' + r.status,
    runLabel(r.id) + ' ' + r.status + (r.reason && r.reason !== r.status ? ' · ' + r.reason : '') + ' · ' + r.turns + (r.turns === 1 ? ' turn' : ' turns'));
  chip.title = 'run ' + r.id + ': jump to its start';
  chip.addEventListener('click', () => go(stepOfSeq.get(r.startedSeq) ?? 0));
  $('runs').append(chip);
}
if (D.unknown.length) {
  const w = $('unknown');
  w.hidden = false;
  w.textContent = D.unknown.length + ' logged transition(s) match no edge of this chart (a log from another version of it?): ' +
    D.unknown.slice(0, 5).map((t) => 'seq ' + t.seq + ' ' + t.from + ' → ' + t.to + ' (' + t.reason + ')').join('; ');
}

// ---- step details and usage
function dl(box, pairs) {
  const list = el('dl');
  for (const [k, v, cls] of pairs) list.append(el('dt', null, k), el('dd', cls || null, v));
  box.replaceChildren(list);
}
function markSide(i) {
  const t = S.turn[i] >= 0 ? D.turns[S.turn[i]] : null;
  const run = S.run[i] >= 0 ? runLabel(S.runs[S.run[i]]) + ' (' + S.runs[S.run[i]] + ')' : '-';
  const tr = lastTransitionAt[i] >= 0 ? TL[lastTransitionAt[i]] : null;
  dl($('step'), [
    ['seq', S.seq[i] + ' / ' + S.seq[N - 1]],
    ['record', S.types[S.type[i]]],
    ['time', fmtClock(S.at[i]) + '  (' + fmtRel(S.at[i]) + ')'],
    ['run', run + (t ? ' · turn ' + t.turn : '')],
    ['state', S.state[i] >= 0 ? D.states[S.state[i]] : '-'],
    ['last edge', tr ? tr.reason : '-', tr ? reasonClass(tr.reason) : ''],
    ['what', S.note[i]],
  ]);
  const u = S.usages[S.usage[i]];
  dl($('usage'), [
    ['input', fmtInt(u[0])],
    ['output', fmtInt(u[1])],
    ['cache read', fmtInt(u[2])],
    ['cache write', fmtInt(u[3])],
    ['cost', '$' + u[4].toFixed(4)],
  ]);
}

// ---- tokens per turn
const bars = [];
function drawTokens() {
  const svg = $('tokens-svg');
  const W = 400, H = 170, L = 44, B = 20, T = 8;
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  const turns = D.turns;
  if (turns.length === 0) { svg.appendChild(svgEl('text', { x: L, y: H / 2 })).textContent = 'no model calls'; return; }
  const total = (t) => t.input + t.cacheRead + t.cacheCreation + t.output;
  const max = Math.max(1, ...turns.map(total));
  const bw = (W - L - 4) / turns.length;
  const y = (v) => H - B - (v / max) * (H - B - T);
  svg.appendChild(svgEl('text', { x: L - 6, y: T + 8, 'text-anchor': 'end' })).textContent = fmtInt(max);
  svg.appendChild(svgEl('text', { x: L - 6, y: H - B, 'text-anchor': 'end' })).textContent = '0';
  const every = Math.ceil(turns.length / 12);
  turns.forEach((t, k) => {
    const x = L + k * bw;
    const g = svgEl('g', {});
    let base = 0;
    for (const [cls, v] of [['bar-in', t.input + t.cacheCreation], ['bar-cache', t.cacheRead], ['bar-out', t.output]]) {
      if (v > 0) g.append(svgEl('rect', { class: cls, x: x + 1, width: Math.max(1, bw - 2), y: y(base + v), height: y(base) - y(base + v) }));
      base += v;
    }
    const frame = svgEl('rect', { class: 'frame', x: x + 0.5, width: Math.max(1, bw - 1), y: y(total(t)) - 1, height: y(0) - y(total(t)) + 1 });
    g.append(frame);
    const tip = svgEl('title', {});
    tip.textContent = t.run + ' turn ' + t.turn + ': in ' + fmtInt(t.input) + ', cache read ' + fmtInt(t.cacheRead) +
      ', cache write ' + fmtInt(t.cacheCreation) + ', out ' + fmtInt(t.output) + ' (' + t.calls + ' calls' +
      (t.compaction ? ', ' + fmtInt(t.compaction) + ' in compaction' : '') + ')';
    g.append(tip);
    if (k > 0 && turns[k - 1].run !== t.run) svg.append(svgEl('line', { class: 'run-sep', x1: x, x2: x, y1: T, y2: H - B }));
    if (k % every === 0) svg.appendChild(svgEl('text', { x: x + bw / 2, y: H - 6, 'text-anchor': 'middle' })).textContent = String(t.turn);
    svg.append(g);
    bars.push(g);
  });
}
let curBar = null;
function markTokens(i) {
  if (curBar) curBar.classList.remove('cur');
  curBar = S.turn[i] >= 0 ? bars[S.turn[i]] : null;
  if (curBar) curBar.classList.add('cur');
}

// ---- stepper
const slider = $('slider');
slider.max = String(Math.max(0, N - 1));
let cur = -1;
function go(i) {
  i = Math.max(0, Math.min(N - 1, i));
  if (i === cur || N === 0) return;
  cur = i;
  slider.value = String(i);
  const label = $('step-label');
  label.replaceChildren(el('b', null, 'seq ' + S.seq[i]), ' / ' + S.seq[N - 1] + ' · ' + S.types[S.type[i]] + ' · ' + fmtRel(S.at[i]));
  markChart(i);
  markTimeline(i);
  markMessages(i);
  markSide(i);
  markTokens(i);
}
/** Next / previous step that is a transition (the chart moves there). */
function jump(dir) {
  for (let i = cur + dir; i >= 0 && i < N; i += dir) if (S.types[S.type[i]] === 'transition') return go(i);
  go(dir > 0 ? N - 1 : 0);
}
slider.addEventListener('input', () => go(Number(slider.value)));
$('first').addEventListener('click', () => go(0));
$('prev-t').addEventListener('click', () => jump(-1));
$('prev').addEventListener('click', () => go(cur - 1));
$('next').addEventListener('click', () => go(cur + 1));
$('next-t').addEventListener('click', () => jump(1));
$('last').addEventListener('click', () => go(N - 1));
document.addEventListener('keydown', (e) => {
  if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
  const k = e.key;
  if (k === 'ArrowRight' || k === 'l') e.shiftKey ? jump(1) : go(cur + 1);
  else if (k === 'ArrowLeft' || k === 'h') e.shiftKey ? jump(-1) : go(cur - 1);
  else if (k === ']') jump(1);
  else if (k === '[') jump(-1);
  else if (k === 'Home') go(0);
  else if (k === 'End') go(N - 1);
  else return;
  e.preventDefault();
});
drawTokens();
go(N - 1);
`;
