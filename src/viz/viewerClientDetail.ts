/**
 * The viewer's script, part 3: the panels about the selected record — the record itself (its
 * raw JSON, the fact that triggered a transition and the transitions a fact triggered), the
 * history as of it (the last messages, more on request), the timing of its turn as a waterfall,
 * and for a fork what differs from its source. Only the open tab is drawn on a step.
 */
export const VIEWER_JS_DETAIL = String.raw`
let tab = 'record';
const RAW_MAX = 200000;
function dl(pairs) {
  const list = el('dl');
  for (const [k, v, cls] of pairs) {
    const dd = el('dd', cls || null);
    if (v instanceof Node) dd.append(v); else dd.textContent = String(v);
    list.append(el('dt', null, k), dd);
  }
  return list;
}
/** Another session of the page a record leads to: a Task call's sub-agent, or a sub-agent's parent. */
function linkedSession(i) {
  const type = S.type(i);
  if (childByToolUse.size && SUBAGENT_TYPES.has(type)) {
    const k = childByToolUse.get(S.record(i).data.toolUseId);
    if (k !== undefined) return { k, what: 'sub-agent', label: '↳ open ' + (M.sessions[k].parent?.agent || 'child') + ': ' };
  }
  if (type === 'session.created' && S.meta.parent) {
    const k = M.sessions.findIndex((s) => s.id === S.meta.parent.session);
    if (k >= 0) return { k, what: 'started by', label: '↰ open the parent: ' };
  }
  return null;
}
function recordLink(i, prefix) {
  const b = el('button', 'link', (prefix || '') + 'seq ' + S.seq(i) + ' ' + (S.c.edge[i] !== -1 ? S.t.reasons[S.c.reason[i]] : S.type(i)) + ' — ' + clip(S.notes.get(i), 90));
  b.addEventListener('click', () => go(i));
  return b;
}
function longText(text, cls) {
  const pre = el('pre', cls);
  pre.textContent = text.length > RAW_MAX ? text.slice(0, RAW_MAX) + '…' : text;
  const frag = [pre];
  if (text.length > RAW_MAX) {
    const more = el('button', 'more', 'show all ' + fmtInt(text.length) + ' characters');
    more.addEventListener('click', () => { pre.textContent = text; more.remove(); });
    frag.push(more);
  }
  return frag;
}

function drawRecord(pane) {
  const i = cur;
  const c = S.c;
  const r = S.record(i);
  const turn = c.turn[i] >= 0 ? S.t.turns[c.turn[i]] : null;
  const rows = [
    ['seq', S.seq(i) + ' of ' + S.seq(S.n - 1)],
    ['record', r.type],
    ['time', new Date(S.meta.t0 + c.at[i]).toISOString().slice(11, 23) + '  (' + fmtRel(c.at[i]) + ')'],
    ['run', c.run[i] >= 0 ? S.runLabel(c.run[i]) + ' (' + S.t.runs[c.run[i]] + ')' + (turn ? ' · turn ' + turn.turn : '') : '-'],
    ['state after', c.state[i] >= 0 ? CH.states[c.state[i]] : '-'],
  ];
  if (c.edge[i] !== -1) {
    const reason = S.t.reasons[c.reason[i]];
    rows.push(['reason', reason, reasonClass(reason)]);
    rows.push(['edge', c.edge[i] >= 0 ? CH.edges[c.edge[i]].id : 'no edge of this chart (a log from another version of it?)']);
    if (Object.hasOwn(CH.reasonDocs, reason)) rows.push(['means', CH.reasonDocs[reason]]);
    rows.push(['triggered by', c.cause[i] >= 0 ? recordLink(c.cause[i], '◂ ') : '-', 'cause-link']);
  } else {
    rows.push(['what', S.notes.get(i)]);
  }
  const other = linkedSession(i);
  if (other) {
    const open = el('button', 'link session-link', other.label + (M.sessions[other.k].title || M.sessions[other.k].id));
    open.title = 'open session ' + M.sessions[other.k].id;
    open.addEventListener('click', () => switchSession(other.k));
    rows.push([other.what, open]);
  }
  S.derive();
  const effects = S.effectOf.get(i) || [];
  if (effects.length) {
    const list = el('div');
    for (const e of effects) list.append(recordLink(e, '▸ '));
    rows.push(['led to', list, 'effect-link']);
  }
  pane.replaceChildren(dl(rows), el('h3', null, 'raw JSON'), ...longText(JSON.stringify(r, null, 2), 'raw'));
}

// ---- messages as of the record: the last WINDOW, older ones on request
const WINDOW = 40;
let shown = WINDOW;
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
const TODO_MARK = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };
/** A TodoWrite list as a checklist: what the session's todo list became at that call. */
function todoList(todos) {
  return todos.map((t) => (TODO_MARK[t?.status] || '[?]') + ' ' + String(t?.status === 'in_progress' ? t.activeForm : t?.content)).join('\n');
}
function renderContent(parent, content) {
  if (typeof content === 'string') return textBlock(parent, 'text', content);
  if (content.length === 0) return textBlock(parent, 'empty', '');
  for (const b of content) {
    if (b.type === 'text') textBlock(parent, 'text', b.text);
    else if (b.type === 'thinking') textBlock(parent, 'thinking', b.thinking, 'thinking');
    else if (b.type === 'redacted_thinking') textBlock(parent, 'redacted thinking', '[redacted]', 'thinking');
    else if (b.type === 'tool_use' && b.name === 'TodoWrite' && Array.isArray(b.input?.todos))
      textBlock(parent, 'tool_use ▸ TodoWrite · ' + b.id + ' · the todo list', todoList(b.input.todos));
    else if (b.type === 'tool_use') textBlock(parent, 'tool_use ▸ ' + b.name + ' · ' + b.id, JSON.stringify(b.input, null, 2));
    else if (b.type === 'tool_result')
      textBlock(parent, 'tool_result ◂ ' + b.tool_use_id + (b.is_error ? ' · is_error' : ''), asText(b.content), null, b.is_error);
    else textBlock(parent, b.type, JSON.stringify(b, null, 2));
  }
}
function drawMessages(pane) {
  const i = cur;
  const ids = S.history(i);
  const prev = i > 0 ? S.history(i - 1) : [];
  const sameSeg = i > 0 && S.c.seg[i - 1] === S.c.seg[i];
  const before = sameSeg ? null : new Set(prev);
  const from = Math.max(0, ids.length - shown);
  const out = [];
  out.push(el('div', 'wf-head', ids.length + ' messages as of seq ' + S.seq(i) + (S.c.seg[i] > 0 ? ' (after ' + S.c.seg[i] + ' compaction' + (S.c.seg[i] > 1 ? 's' : '') + ')' : '')));
  if (from > 0) {
    const more = el('button', 'more', 'show ' + Math.min(WINDOW, from) + ' earlier (' + from + ' hidden)');
    more.addEventListener('click', () => { shown += WINDOW; drawDetail(); });
    out.push(more);
  }
  let firstNew = null;
  for (let k = from; k < ids.length; k++) {
    const m = S.message(ids[k]);
    const isNew = sameSeg ? k >= prev.length : i > 0 && !before.has(ids[k]);
    const card = el('div', 'msg ' + (m.role === 'user' ? 'user' : 'assistant') + (isNew ? ' new' : ''));
    const head = el('div', 'msg-head');
    head.append(el('span', null, '#' + (k + 1)), el('span', 'role', m.role), el('span', null, m.origin));
    if (isNew) head.append(el('span', 'tag', 'new at this record'));
    card.append(head);
    renderContent(card, m.content);
    out.push(card);
    if (isNew && !firstNew) firstNew = card;
  }
  if (ids.length === 0) out.push(el('div', 'hint', 'no messages yet'));
  pane.replaceChildren(...out);
  (firstNew || pane.lastChild).scrollIntoView({ block: 'nearest' });
}

// ---- the turn's timing: model calls, tools, hooks and waits as bars on one time axis
const TURN_MAX_RECORDS = 5000;
function turnRange(k) {
  const first = S.t.turns[k].first;
  let end = first;
  while (end < S.n && end - first < TURN_MAX_RECORDS && S.c.turn[end] === k) end++;
  return [first, end];
}
function turnSpans(first, end) {
  const spans = [];
  const open = new Map();
  let model = null;
  for (let i = first; i < end; i++) {
    const r = S.record(i);
    const at = S.c.at[i];
    const d = r.data;
    if (r.type === 'model.requested') model = { i, at, name: (d.purpose === 'compaction' ? 'compaction call' : 'model call') + ' #' + d.attempt, cls: d.purpose === 'compaction' ? 'compaction' : '' };
    else if ((r.type === 'model.responded' || r.type === 'model.failed') && model) {
      const u = r.type === 'model.responded' ? d.response.usage : null;
      spans.push({ ...model, end: at, cls: r.type === 'model.failed' ? 'fail' : model.cls,
        note: u ? 'in ' + fmtInt(u.inputTokens) + ' · out ' + fmtInt(u.outputTokens) + (u.cacheReadInputTokens ? ' · cache ' + fmtInt(u.cacheReadInputTokens) : '') : d.failure.kind + (d.failure.status ? ' ' + d.failure.status : '') });
      model = null;
    } else if (r.type === 'tool.started') open.set(d.toolUseId, { i, at, name: 'tool ' + d.name, cls: 'tool' });
    else if (r.type === 'tool.finished') {
      const s = open.get(d.toolUseId) || { i, at: at - d.durationMs, name: 'tool ' + d.name, cls: 'tool' };
      open.delete(d.toolUseId);
      spans.push({ ...s, end: at, cls: d.outcome === 'ok' ? 'tool' : 'fail', note: d.outcome + ' · ' + fmtMs(d.durationMs) });
    } else if (r.type === 'hook.decided') spans.push({ i, at: at - d.durationMs, end: at, name: d.hook + ' hook', cls: 'hook', note: d.decision });
    else if (r.type === 'backoff.scheduled') spans.push({ i, at, end: at + d.delayMs, name: 'backoff #' + d.attempt, cls: 'wait', note: 'wait ' + fmtMs(d.delayMs) });
  }
  if (model) spans.push({ ...model, end: S.c.at[end - 1], note: 'no answer logged' });
  for (const s of open.values()) spans.push({ ...s, end: S.c.at[end - 1], note: 'not finished' });
  return spans.sort((a, b) => a.at - b.at || a.i - b.i);
}
function drawTiming(pane) {
  const k = S.c.turn[cur];
  if (k < 0) { pane.replaceChildren(el('div', 'hint', 'this record is not part of a turn (outside a run)')); return; }
  const t = S.t.turns[k];
  const [first, end] = turnRange(k);
  const spans = turnSpans(first, end);
  const t0 = S.c.at[first];
  const t1 = Math.max(S.c.at[end - 1], ...spans.map((s) => s.end));
  const total = Math.max(t1 - t0, 0.001);
  const head = el('div', 'wf-head');
  const prevT = el('button', 'mini', '◀ turn');
  const nextT = el('button', 'mini', 'turn ▶');
  prevT.disabled = k === 0;
  nextT.disabled = k + 1 >= S.t.turns.length || S.t.turns[k + 1].first >= S.n;
  prevT.addEventListener('click', () => go(S.t.turns[k - 1].first));
  nextT.addEventListener('click', () => go(S.t.turns[k + 1].first));
  head.append(prevT, nextT, el('span', null, S.runLabel(S.t.runs.indexOf(t.run)) + ' turn ' + t.turn + ' · seq ' + S.seq(first) + '–' + S.seq(end - 1) +
    ' · ' + fmtMs(total) + ' · ' + spans.filter((s) => s.name.startsWith('model')).length + ' model call(s), ' + spans.filter((s) => s.cls === 'tool' || s.name.startsWith('tool')).length + ' tool call(s)'));
  const grid = el('div', 'wf');
  for (const s of spans) {
    const name = el('span', 'name', s.name);
    name.title = 'seq ' + S.seq(s.i) + ': ' + s.name + (s.note ? ' · ' + s.note : '');
    const track = el('div', 'track');
    const bar = el('div', 'bar ' + s.cls + (s.i === cur || (cur > s.i && S.c.at[cur] <= s.end && s.cls !== 'wait') ? ' sel' : ''));
    bar.style.left = ((s.at - t0) / total) * 100 + '%';
    bar.style.width = (Math.max(s.end - s.at, 0) / total) * 100 + '%';
    bar.title = name.title;
    track.append(bar);
    for (const x of [name, bar]) x.addEventListener('click', () => go(s.i));
    grid.append(name, track, el('span', 'dur', fmtMs(Math.max(s.end - s.at, 0))));
  }
  const out = [head, grid];
  if (spans.length === 0) out.push(el('div', 'hint', 'no model call, tool or hook in this turn'));
  else out.push(el('div', 'hint', 'bars: model calls (blue), tools (teal), hooks (violet), backoff waits (grey), failures (red); click one to select its record'));
  pane.replaceChildren(...out);
}

// ---- fork: where it left its source, what differs after
function drawFork(pane) {
  const f = M.fork;
  const out = [];
  const sourceAt = M.sessions.findIndex((s) => s.id === f.source);
  const head = el('div', 'wf-head', 'forked from ' + f.source + ' at seq ' + f.seq + (f.at.state ? ' (state ' + f.at.state + ', ' : ' (') + f.at.messages + ' messages)');
  const jump = el('button', 'mini', 'go to the fork point');
  jump.addEventListener('click', () => { const i = S.indexOfSeq(f.seq); if (i >= 0) go(i); });
  head.append(jump);
  if (sourceAt >= 0) {
    const open = el('button', 'mini', 'open the source');
    open.addEventListener('click', () => switchSession(sourceAt));
    head.append(open);
  }
  out.push(head);
  if (f.firstDifference) {
    out.push(el('h3', null, 'first difference: seq ' + f.firstDifference.seq));
    const rows = [['source', f.firstDifference.source ?? '(its log ends before)'], ['fork', f.firstDifference.fork ?? '(its log ends before)']];
    const c = f.firstDifference.content;
    if (c) rows.push(['source content', c.source ?? '-'], ['fork content', c.fork ?? '-']);
    out.push(dl(rows));
  } else out.push(el('div', 'hint', 'the fork has added nothing yet'));
  const table = (cols, rows) => {
    const t = el('table', 'diff');
    const tr = el('tr');
    for (const c of cols) tr.append(el('th', null, c));
    t.append(tr);
    for (const r of rows) { const row = el('tr'); for (const [text, cls] of r) row.append(el('td', cls || null, text)); t.append(row); }
    return t;
  };
  const runs = (side) => side.runs.map((r) => r.status + (r.reason && r.reason !== r.status ? ' (' + r.reason + ')' : '') + ', ' + r.turns + ' turns').join('; ') || '-';
  const s = f.sides.source, k = f.sides.fork;
  out.push(el('h3', null, 'after seq ' + f.seq));
  out.push(table(['', 'source ' + clip(s.session, 20), 'fork ' + clip(k.session, 20)], [
    [['records'], [fmtInt(s.records)], [fmtInt(k.records)]],
    [['transitions'], [fmtInt(s.transitions)], [fmtInt(k.transitions)]],
    [['runs'], [runs(s)], [runs(k)]],
    [['tokens in / out'], [fmtInt(s.usage.input) + ' / ' + fmtInt(s.usage.output)], [fmtInt(k.usage.input) + ' / ' + fmtInt(k.usage.output)]],
    [['cost'], ['$' + s.usage.costUsd.toFixed(4)], ['$' + k.usage.costUsd.toFixed(4)]],
  ]));
  out.push(el('h3', null, 'history: ' + f.messages.common + ' messages shared, then'));
  const n = Math.max(f.messages.source.length, f.messages.fork.length);
  const cell = (m, cls) => (m ? ['#' + m.n + ' ' + m.role + ': ' + m.text, cls] : ['', '']);
  const mrows = [];
  for (let j = 0; j < n; j++) mrows.push([cell(f.messages.source[j], 'src-only'), cell(f.messages.fork[j], 'fork-only')]);
  out.push(n ? table(['source only', 'fork only'], mrows) : el('div', 'hint', 'the histories end the same'));
  if (f.messages.more) out.push(el('div', 'hint', '… more messages differ'));
  out.push(el('h3', null, 'transitions after the fork point (aligned)'));
  out.push(table(['source', 'fork'], f.transitions.rows.map((r) =>
    r.op === 'same' ? [[r.text, 'same'], [r.text, 'same']] : r.op === 'source' ? [[r.text, 'src-only'], ['', '']] : [['', ''], [r.text, 'fork-only']])));
  if (f.transitions.truncated) out.push(el('div', 'hint', '… only the first transitions are compared'));
  pane.replaceChildren(...out);
}

function drawDetail() {
  if (!S || cur < 0) return;
  const pane = $('pane-' + tab);
  if (tab === 'record') drawRecord(pane);
  else if (tab === 'messages') drawMessages(pane);
  else if (tab === 'timing') drawTiming(pane);
  else if (tab === 'fork') drawFork(pane);
}
for (const b of document.querySelectorAll('#tabs button')) {
  b.addEventListener('click', () => {
    tab = b.dataset.tab;
    for (const o of document.querySelectorAll('#tabs button')) o.classList.toggle('on', o === b);
    for (const p of document.querySelectorAll('.pane')) p.hidden = p.id !== 'pane-' + tab;
    drawDetail();
  });
}
`;
