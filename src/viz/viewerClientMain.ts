/**
 * The viewer's script, part 4: the header (sessions of the page, runs), the stepper and the
 * keyboard, switching between the sessions a page holds (a fork's source, child sessions),
 * and — when `reloop serve` serves the page — following the session live: each `record`
 * event of the server's event stream asks it for the viewer's view of the new records.
 */
export const VIEWER_JS_MAIN = `
const decoded = new Map();
let childByToolUse = new Map();
let following = true;

function drawHeader() {
  const m = S.meta;
  document.title = 'reloop · ' + (m.title || m.id);
  $('title').textContent = m.title || '(untitled session)';
  const where = [];
  if (m.forkedFrom) where.push('forked from ' + m.forkedFrom.session + '@' + m.forkedFrom.seq);
  if (m.parent) where.push('child of ' + m.parent.session + (m.parent.agent ? ' (' + m.parent.agent + ')' : ''));
  $('session-meta').textContent = m.id + ' · ' + fmtInt(S.n) + ' records' + (m.cwd ? ' · ' + m.cwd : '') + (where.length ? ' · ' + where.join(' · ') : '');
  const chips = [];
  for (const r of m.runs) {
    const k = S.t.runs.indexOf(r.id);
    const chip = el('button', 'chip ' + r.status,
      S.runLabel(k) + ' ' + r.status + (r.reason && r.reason !== r.status ? ' · ' + r.reason : '') + ' · ' + r.turns + ' turns');
    chip.title = 'run ' + r.id + ': go to its start';
    chip.addEventListener('click', () => { const i = S.indexOfSeq(r.startedSeq); if (i >= 0) go(i); });
    chips.push(chip);
  }
  $('runs').replaceChildren(...chips);
  let unknown = 0;
  for (let i = 0; i < S.n; i++) if (S.c.edge[i] === -2) unknown++;
  $('unknown').hidden = unknown === 0;
  $('unknown').textContent = unknown + ' logged transition(s) match no edge of this chart (a log from another version of it?)';
  $('tab-fork').hidden = !(M.fork && S.info.role === 'main');
}

// ---- stepper
const slider = $('slider');
function go(i, from) {
  if (!S || S.n === 0) return;
  i = Math.max(0, Math.min(S.n - 1, i));
  if (i !== cur) shown = WINDOW;
  cur = i;
  following = i === S.n - 1;
  slider.max = String(S.n - 1);
  slider.value = String(i);
  $('step-label').replaceChildren(el('b', null, 'seq ' + S.seq(i)), ' / ' + S.seq(S.n - 1) + ' · ' + S.type(i) + ' · ' + fmtRel(S.c.at[i]));
  causeOfCur = S.c.edge[i] !== -1 ? S.c.cause[i] : -1;
  S.derive();
  effectsOfCur = S.effectOf.get(i) || [];
  markChart(i);
  if (from === 'timeline') renderRows(); else scrollToCur();
  drawDetail();
}
/** Next / previous transition (the chart moves there). */
function jump(dir) {
  for (let i = cur + dir; i >= 0 && i < S.n; i += dir) if (S.c.edge[i] !== -1) return go(i);
  go(dir > 0 ? S.n - 1 : 0);
}
slider.addEventListener('input', () => go(Number(slider.value)));
$('first').addEventListener('click', () => go(0));
$('prev-t').addEventListener('click', () => jump(-1));
$('prev').addEventListener('click', () => go(cur - 1));
$('next').addEventListener('click', () => go(cur + 1));
$('next-t').addEventListener('click', () => jump(1));
$('last').addEventListener('click', () => go(S.n - 1));
document.addEventListener('keydown', (e) => {
  const t = e.target;
  if (t === slider || t.tagName === 'INPUT' || t.tagName === 'SELECT' || e.altKey || e.ctrlKey || e.metaKey) return;
  const k = e.key;
  if (k === 'ArrowRight' || k === 'l') e.shiftKey ? jump(1) : go(cur + 1);
  else if (k === 'ArrowLeft' || k === 'h') e.shiftKey ? jump(-1) : go(cur - 1);
  else if (k === 'ArrowDown' || k === 'j') stepRow(1);
  else if (k === 'ArrowUp' || k === 'k') stepRow(-1);
  else if (k === ']') jump(1);
  else if (k === '[') jump(-1);
  else if (k === 'Home') go(0);
  else if (k === 'End') go(S.n - 1);
  else if (k === '/') $('f-text').focus();
  else return;
  e.preventDefault();
});

// ---- sessions of the page
async function sessionAt(k) {
  let s = decoded.get(k);
  if (!s) {
    s = new Session(M.sessions[k], await decodeChunk($(M.sessions[k].chunk).textContent));
    decoded.set(k, s);
  }
  return s;
}
async function switchSession(k) {
  S = await sessionAt(k);
  $('session-pick').value = String(k);
  childByToolUse = new Map();
  M.sessions.forEach((o, j) => { if (o.parent && o.parent.session === S.info.id && o.parent.toolUseId) childByToolUse.set(o.parent.toolUseId, j); });
  F.type = F.reason = F.tool = -1;
  F.text = '';
  F.chart = null;
  $('f-text').value = '';
  cur = -1;
  drawHeader();
  fillFilters();
  markPicked();
  refilter();
  go(S.n - 1);
}
/** The page's sessions as a tree: each sub-agent right under the session that started it. */
function sessionTreeOrder() {
  const at = new Map(M.sessions.map((s, k) => [s.id, k]));
  const kids = new Map();
  const roots = [];
  M.sessions.forEach((s, k) => {
    const p = s.parent ? at.get(s.parent.session) : undefined;
    if (p === undefined || p === k) roots.push(k);
    else { if (!kids.has(p)) kids.set(p, []); kids.get(p).push(k); }
  });
  const out = [];
  const seen = new Set();
  const visit = (k, depth) => {
    if (seen.has(k)) return;
    seen.add(k);
    out.push([k, depth]);
    for (const c of kids.get(k) || []) visit(c, depth + 1);
  };
  for (const k of roots) visit(k, 0);
  M.sessions.forEach((_, k) => visit(k, 0));
  return out;
}
{
  const pick = $('session-pick');
  for (const [k, depth] of sessionTreeOrder()) {
    const s = M.sessions[k];
    const agent = depth > 0 && s.parent && s.parent.agent ? '[' + s.parent.agent + '] ' : '';
    const role = s.role === 'source' ? 'source: ' : '';
    const o = el('option', null, '\u00a0\u00a0'.repeat(depth) + (depth > 0 ? '└ ' : '') + role + agent + (s.title || s.id));
    o.value = String(k);
    pick.append(o);
  }
  pick.hidden = M.sessions.length < 2;
  pick.addEventListener('change', () => switchSession(Number(pick.value)));
}

// ---- live: new records from reloop serve
function startLive() {
  const main = decoded.get(0);
  let fetching = false;
  let again = false;
  let latest = 0;
  const pull = async () => {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      do {
        again = false;
        const res = await fetch(M.live.view + '?after=' + (main.n ? main.seq(main.n - 1) : 0) + '&until=' + latest);
        if (!res.ok) break;
        const ch = await res.json();
        if (ch.count > 0 && main.apply(ch) && S === main) {
          const tail = following;
          drawHeader();
          fillFilters();
          refilter();
          go(tail ? main.n - 1 : cur, 'live');
        }
      } while (again);
    } finally {
      fetching = false;
    }
  };
  const events = new EventSource(M.live.events + '?after=' + (main.n ? main.seq(main.n - 1) : 0));
  events.addEventListener('record', (e) => {
    latest = Math.max(latest, Number(e.lastEventId) || 0);
    pull();
  });
  events.addEventListener('open', () => { $('live').textContent = '● live'; $('live').className = ''; });
  events.addEventListener('error', () => { $('live').textContent = '○ reconnecting'; $('live').className = 'off'; });
}

(async () => {
  await switchSession(0);
  $('loading').hidden = true;
  if (M.live) startLive();
  document.documentElement.dataset.ready = String(Math.round(performance.now()));
})().catch((e) => {
  $('loading').textContent = 'could not open this page: ' + e.message;
});
`;
