/**
 * The viewer's stylesheet. One screen, no page scroll: header and stepper on top, the chart
 * and the record panels on the left, the timeline down the right, so at 1400×900 the chart
 * and the timeline sit side by side. Dark, high-contrast, monospace for everything that came
 * from the log; colour carries meaning only with a second cue (bold, count, outline, badge).
 * Reason colours: blue = the run goes on, green = completed, red = failed, violet = aborted,
 * grey = a step inside a turn; amber = taken by this session / selected.
 */
export const VIEWER_CSS = `
:root {
  --bg: #0b0f14; --panel: #11161d; --panel2: #161c25; --line: #263040; --text: #d4dce6;
  --muted: #8391a3; --dim: #4d5869; --amber: #f5b841; --amber-dim: #6b5320; --blue: #6cb6ff;
  --green: #6bdd8b; --red: #ff7b72; --violet: #c297ff; --cyan: #56d4dd;
  --mono: ui-monospace, "JetBrains Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  --sans: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: var(--bg); color: var(--text); font: 13.5px/1.45 var(--sans); }
body { display: flex; flex-direction: column; overflow: hidden; }
button, select, input { font: inherit; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 14px; padding: 6px 14px;
  border-bottom: 1px solid var(--line); background: var(--panel); }
header h1 { margin: 0; font-size: 16px; font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 40vw; }
header h1 .brand { color: var(--amber); font-family: var(--mono); margin-right: 8px; }
.meta { color: var(--muted); font-family: var(--mono); font-size: 12px; }
.chips { display: flex; gap: 6px; flex-wrap: wrap; }
.chip { font-family: var(--mono); font-size: 11.5px; padding: 1px 8px; border-radius: 10px; cursor: pointer;
  border: 1px solid var(--line); background: var(--panel2); color: var(--text); }
.chip.completed { border-color: #2c6e44; } .chip.failed { border-color: #8a3a36; }
.chip.aborted { border-color: #5f4a8a; } .chip.running { border-color: #7a6320; }
#live { font-family: var(--mono); font-size: 11.5px; color: var(--green); }
#live.off { color: var(--muted); }
select { background: var(--panel2); color: var(--text); border: 1px solid var(--line); border-radius: 5px; padding: 1px 4px; max-width: 190px; }
input[type=search] { background: var(--panel2); color: var(--text); border: 1px solid var(--line); border-radius: 5px;
  padding: 2px 8px; min-width: 0; }
.warn { margin: 6px 14px 0; padding: 4px 10px; border: 1px solid #8a3a36; border-radius: 6px;
  background: #2a1414; color: #ffb4ae; font-family: var(--mono); font-size: 12px; }
#stepper { display: flex; align-items: center; gap: 6px; padding: 5px 14px; border-bottom: 1px solid var(--line); }
#stepper button, .tabs button, .mini { background: var(--panel2); color: var(--text); border: 1px solid var(--line);
  border-radius: 6px; padding: 1px 8px; cursor: pointer; font-family: var(--mono); }
#stepper button:hover, .tabs button:hover, .mini:hover { border-color: var(--amber); }
#slider { flex: 1; accent-color: var(--amber); min-width: 80px; }
#step-label { font-family: var(--mono); font-size: 12px; min-width: 300px; text-align: right; color: var(--muted); }
#step-label b { color: var(--text); }
main { flex: 1; min-height: 0; display: grid; gap: 8px; padding: 8px 14px 10px;
  grid-template-columns: minmax(0, 1fr) minmax(400px, 38%); grid-template-rows: minmax(0, 56fr) minmax(0, 44fr); }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; min-width: 0; min-height: 0;
  display: flex; flex-direction: column; }
section > h2 { margin: 0; padding: 4px 10px; font-size: 11.5px; font-weight: 600; letter-spacing: .06em;
  text-transform: uppercase; color: var(--muted); border-bottom: 1px solid var(--line); display: flex;
  align-items: center; gap: 8px; min-height: 28px; }
section > h2 .sub { text-transform: none; letter-spacing: 0; font-family: var(--mono); font-weight: 400; margin-left: auto; }
#timeline-panel { grid-column: 2; grid-row: 1 / 3; }
#chart-panel { grid-column: 1; grid-row: 1; }
#detail-panel { grid-column: 1; grid-row: 2; }
@media (max-width: 1000px) {
  body { overflow: auto; } main { display: block; } section { margin-bottom: 8px; height: 70vh; }
}

/* chart */
.chart-box { flex: 1; min-height: 0; overflow: auto; padding: 2px 4px; }
svg.chart { display: block; width: 100%; height: 100%; font-family: var(--mono); }
svg.chart[data-view=full] { width: auto; height: auto; min-width: 100%; }
svg.chart[hidden] { display: none; }
.state { cursor: pointer; }
.state rect { fill: var(--panel2); stroke: #3a4658; stroke-width: 1.5; }
.state text { fill: var(--text); font-size: 15px; }
.state.final rect.inner { fill: none; }
.state.rail rect { fill: #170f12; stroke: #5a2f33; }
.state.rail text { fill: #d98a84; font-weight: 600; }
.state.visited rect { stroke: var(--amber-dim); stroke-width: 2; }
.state.current rect { stroke: var(--amber); stroke-width: 3; fill: #2a2210; }
.state.current text { fill: #fff3d6; font-weight: 700; }
.state.picked rect, .edge.picked .line { stroke: var(--cyan) !important; }
.state:hover rect { stroke: var(--cyan); }
.start { fill: var(--text); }
.start-line { stroke: var(--text); stroke-width: 1.5; fill: none; }
.edge { cursor: pointer; }
.edge .line { fill: none; stroke: #334052; stroke-width: 1.3; }
.edge.terminal .line { stroke-dasharray: 5 4; }
.edge .hit { fill: none; stroke: transparent; stroke-width: 12; }
.edge:hover .line { stroke: var(--cyan); }
.edge.taken .line { stroke: var(--amber); stroke-width: 2.6; }
.edge.last .line { stroke: #ffffff; stroke-width: 3.4; }
/* Each SVG has its own markers: a marker inside a hidden SVG would not draw. */
[data-view=overview] .start-line, [data-view=overview] .edge .line { marker-end: url(#arrow-base-overview); }
[data-view=overview] .edge.taken .line { marker-end: url(#arrow-taken-overview); }
[data-view=overview] .edge.last .line { marker-end: url(#arrow-last-overview); }
[data-view=full] .start-line, [data-view=full] .edge .line { marker-end: url(#arrow-base-full); }
[data-view=full] .edge.taken .line { marker-end: url(#arrow-taken-full); }
[data-view=full] .edge.last .line { marker-end: url(#arrow-last-full); }
.arrow-base path { fill: #334052; } .arrow-taken path { fill: var(--amber); } .arrow-last path { fill: #fff; }
.label-bg { fill: var(--panel); opacity: .88; }
.edge-label { font-size: 12px; fill: #6b788b; cursor: pointer; }
.edge-label:hover { text-decoration: underline; }
.edge-label.r-cont { fill: #4f7fae; } .edge-label.r-fail { fill: #a8615b; } .edge-label.r-ok { fill: #4f9a68; }
.edge-label.r-abort { fill: #8a74b5; }
.edge-label.taken { font-weight: 700; fill: var(--amber); }
.edge-label.last { fill: #fff; text-decoration: underline; }
.edge-label.picked { fill: var(--cyan); }
.edge-label .count { fill: var(--amber); font-weight: 700; }
.edge-label.last .count { fill: #fff; }
.legend { display: flex; gap: 10px; font-size: 11px; color: var(--muted); flex-wrap: wrap; text-transform: none; letter-spacing: 0; font-weight: 400; }

/* timeline */
#filters { display: flex; flex-wrap: wrap; gap: 5px; padding: 5px 8px; border-bottom: 1px solid var(--line); align-items: center; }
#f-text { flex: 1 1 160px; }
#f-chart { cursor: pointer; border-color: var(--cyan); color: var(--cyan); }
#f-chart[hidden] { display: none; }
.vlist { flex: 1; min-height: 0; overflow: auto; position: relative; contain: strict; }
#tl-rows { position: absolute; left: 0; right: 0; top: 0; will-change: transform; }
.row { height: 22px; display: grid; grid-template-columns: 40px 62px 46px 176px minmax(0, 1fr) auto; gap: 6px;
  align-items: center; padding: 0 6px; font-family: var(--mono); font-size: 12px; cursor: pointer;
  border-top: 1px solid #161d27; white-space: nowrap; }
.row > span { overflow: hidden; text-overflow: ellipsis; }
.row[hidden] { display: none; }
.row:hover { background: #18202b; }
.row .num { color: var(--muted); text-align: right; }
.row .kind { color: var(--muted); }
.row .text b { font-weight: 500; }
.row.future > span { color: #5a6676 !important; }
.row.sel { background: #2a2210; box-shadow: inset 3px 0 0 var(--amber); }
.row.cause, .row.effect { background: #10252a; box-shadow: inset 3px 0 0 var(--cyan); }
.row.b-run { border-top: 2px solid var(--amber-dim); }
.row.b-end { border-bottom: 2px solid var(--amber-dim); }
.row.b-fork { border-bottom: 2px dashed var(--cyan); }
.badge { font-size: 10.5px; padding: 0 5px; border-radius: 8px; border: 1px solid var(--line); color: var(--muted); }
.badge.run { border-color: var(--amber-dim); color: var(--amber); }
.badge.fork, .badge.child { border-color: #1f5f66; color: var(--cyan); }
.t-transition { color: var(--muted); }
.t-model { color: #a5b6ff; } .t-tool { color: var(--cyan); } .t-msg { color: #d7c28e; }
.t-run { color: var(--amber); } .t-err { color: var(--red); }
.r-cont { color: var(--blue); } .r-ok { color: var(--green); } .r-fail { color: var(--red); }
.r-abort { color: var(--violet); } .r-step { color: var(--muted); } .r-none { color: var(--red); }
.hint { color: var(--muted); font-style: italic; padding: 10px; }

/* detail */
.tabs { display: flex; gap: 4px; }
.tabs button { padding: 0 9px; font-size: 11.5px; text-transform: none; letter-spacing: 0; }
.tabs button.on { border-color: var(--amber); color: var(--amber); }
.tabs button[hidden] { display: none; }
.pane { flex: 1; min-height: 0; overflow: auto; padding: 8px 10px; }
.pane[hidden] { display: none; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0 0 8px; font-family: var(--mono); font-size: 12px; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-word; }
.link { background: none; border: 0; padding: 0; color: var(--cyan); cursor: pointer; font-family: var(--mono); font-size: 12px; text-align: left; }
.link:hover { text-decoration: underline; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12px/1.5 var(--mono); color: var(--text); }
pre.raw { background: var(--panel2); border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; }
pre.thinking { color: var(--muted); font-style: italic; }
.more { margin-top: 4px; background: none; border: 1px solid var(--line); color: var(--muted);
  border-radius: 4px; font: 11.5px var(--mono); cursor: pointer; }
.msg { border: 1px solid var(--line); border-left: 3px solid var(--dim); border-radius: 6px; margin: 0 0 8px; background: var(--panel2); }
.msg.user { border-left-color: var(--blue); } .msg.assistant { border-left-color: var(--amber); }
.msg.new { box-shadow: 0 0 0 1px var(--amber); }
.msg-head { display: flex; gap: 10px; padding: 2px 9px; font-family: var(--mono); font-size: 11.5px;
  color: var(--muted); border-bottom: 1px solid #1f2733; }
.msg-head .role { color: var(--text); font-weight: 700; }
.msg-head .tag { color: var(--amber); }
.block { padding: 5px 9px; }
.block + .block { border-top: 1px dashed #243041; }
.block .kind { font-family: var(--mono); font-size: 11.5px; color: var(--cyan); margin-bottom: 2px; }
.block .kind.err { color: var(--red); }
.wf-head { font-family: var(--mono); font-size: 12px; color: var(--muted); margin-bottom: 6px; display: flex; gap: 8px; align-items: center; }
.wf { display: grid; grid-template-columns: 170px minmax(0, 1fr) 92px; gap: 3px 8px; font-family: var(--mono); font-size: 11.5px; align-items: center; }
.wf .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; cursor: pointer; }
.wf .track { position: relative; height: 14px; background: #0e131a; border-radius: 3px; }
.wf .bar { position: absolute; top: 2px; height: 10px; min-width: 2px; border-radius: 2px; background: #3f6a94; cursor: pointer; }
.wf .bar.tool { background: #2c8a92; } .wf .bar.hook { background: #7a5fb0; } .wf .bar.wait { background: #4d5869; }
.wf .bar.fail { background: #a8453f; } .wf .bar.compaction { background: #8a6d2c; }
.wf .bar.sel { outline: 2px solid var(--amber); }
.wf .dur { color: var(--muted); text-align: right; }
table.diff { border-collapse: collapse; width: 100%; font-family: var(--mono); font-size: 12px; margin-bottom: 10px; table-layout: fixed; }
table.diff td, table.diff th { border-top: 1px solid #1a212b; padding: 2px 6px; text-align: left; vertical-align: top; overflow: hidden; text-overflow: ellipsis; }
table.diff th { color: var(--muted); font-weight: 500; }
td.same { color: var(--muted); } td.only { color: var(--text); background: #1b2430; }
td.src-only { background: #2a1414; } td.fork-only { background: #10252a; }
h3 { font-size: 12px; margin: 10px 0 4px; color: var(--muted); font-weight: 600; }
kbd { font-family: var(--mono); font-size: 11px; border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; }
#loading { position: fixed; inset: 0; display: flex; align-items: center; justify-content: center; background: var(--bg);
  color: var(--muted); font-family: var(--mono); z-index: 20; }
#loading[hidden] { display: none; }
`;
