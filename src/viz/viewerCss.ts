/**
 * The viewer's stylesheet. Dark, high-contrast, monospace for everything that came from the
 * log; colour carries meaning only with a second cue (bold, count, outline) for colour-blind
 * readers. Reason colours: blue = the run goes on, green = completed, red = failed,
 * violet = aborted, grey = a step inside a turn; amber = taken by this session.
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
html, body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.45 var(--sans); }
button { font: inherit; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 10px 18px; padding: 10px 16px;
  border-bottom: 1px solid var(--line); background: var(--panel); }
header h1 { margin: 0; font-size: 17px; font-weight: 600; }
header h1 .brand { color: var(--amber); font-family: var(--mono); margin-right: 8px; }
.meta { color: var(--muted); font-family: var(--mono); font-size: 12.5px; }
.chips { display: flex; gap: 6px; flex-wrap: wrap; }
.chip { font-family: var(--mono); font-size: 12px; padding: 2px 8px; border-radius: 10px; cursor: pointer;
  border: 1px solid var(--line); background: var(--panel2); color: var(--text); }
.chip.completed { border-color: #2c6e44; } .chip.failed { border-color: #8a3a36; }
.chip.aborted { border-color: #5f4a8a; } .chip.running { border-color: #7a6320; }
.warn { margin: 8px 16px 0; padding: 6px 10px; border: 1px solid #8a3a36; border-radius: 6px;
  background: #2a1414; color: #ffb4ae; font-family: var(--mono); font-size: 12.5px; }
main { display: grid; grid-template-columns: 580px minmax(0, 1fr) 320px; gap: 10px; padding: 10px 16px 16px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; min-width: 0; }
section > h2 { margin: 0; padding: 7px 12px; font-size: 12px; font-weight: 600; letter-spacing: .06em;
  text-transform: uppercase; color: var(--muted); border-bottom: 1px solid var(--line); display: flex;
  justify-content: space-between; gap: 10px; }
section > h2 .sub { text-transform: none; letter-spacing: 0; font-family: var(--mono); font-weight: 400; }
#chart-panel { grid-column: 1 / -1; padding-bottom: 4px; }
#timeline-panel, #messages-panel, #side-panel { display: flex; flex-direction: column; }
/* Fixed-height, contained scroll boxes: a step changes what is inside them, and without
   containment every step would re-lay out the whole page grid (30 ms a step at 1 000 records). */
#timeline-panel .scroll, #messages-panel .scroll { height: calc(100vh - 110px); min-height: 320px;
  overflow: auto; contain: strict; }
/* The stepper sticks to the top once the chart scrolls away: it stays at hand over the messages. */
#stepper { grid-column: 1 / -1; display: flex; align-items: center; gap: 8px; padding: 8px 12px;
  position: sticky; top: 0; z-index: 5; box-shadow: 0 4px 12px #000a; }
#stepper button { background: var(--panel2); color: var(--text); border: 1px solid var(--line);
  border-radius: 6px; padding: 3px 9px; cursor: pointer; font-family: var(--mono); }
#stepper button:hover { border-color: var(--amber); }
#slider { flex: 1; accent-color: var(--amber); }
#step-label { font-family: var(--mono); font-size: 12.5px; min-width: 330px; text-align: right; color: var(--muted); }
#step-label b { color: var(--text); }
#messages-panel .scroll { padding: 8px 10px; }
#side-panel .box { padding: 10px 12px; border-bottom: 1px solid var(--line); }
#side-panel .box:last-child { border-bottom: 0; }

/* chart */
svg.chart { display: block; width: 100%; height: auto; font-family: var(--mono); }
.state rect { fill: var(--panel2); stroke: #3a4658; stroke-width: 1.5; }
.state text { fill: var(--text); font-size: 15px; }
.state.final rect.inner { fill: none; }
.state.rail rect { fill: #170f12; stroke: #5a2f33; }
.state.rail text { fill: #d98a84; font-weight: 600; }
.state.visited rect { stroke: var(--amber-dim); stroke-width: 2; }
.state.current rect { stroke: var(--amber); stroke-width: 3; fill: #2a2210; }
.state.current text { fill: #fff3d6; font-weight: 700; }
.start { fill: var(--text); }
.start-line { stroke: var(--text); stroke-width: 1.5; marker-end: url(#arrow-base); fill: none; }
.edge .line { fill: none; stroke: #334052; stroke-width: 1.3; marker-end: url(#arrow-base); }
.edge .hit { fill: none; stroke: transparent; stroke-width: 10; }
.edge.taken .line { stroke: var(--amber); stroke-width: 2.6; marker-end: url(#arrow-taken); }
.edge.last .line { stroke: #ffffff; stroke-width: 3.4; marker-end: url(#arrow-last); }
.arrow-base path { fill: #334052; } .arrow-taken path { fill: var(--amber); } .arrow-last path { fill: #fff; }
.label-bg { fill: var(--panel); opacity: .88; }
.edge-label { font-size: 12px; fill: #6b788b; }
.edge-label.r-cont { fill: #4f7fae; } .edge-label.r-fail { fill: #a8615b; } .edge-label.r-ok { fill: #4f9a68; }
.edge-label.r-abort { fill: #8a74b5; }
.edge-label.taken { font-weight: 700; fill: var(--amber); }
.edge-label.last { fill: #fff; text-decoration: underline; }
.edge-label .count { fill: var(--amber); font-weight: 700; }
.edge-label.last .count { fill: #fff; }
.legend { display: flex; gap: 14px; padding: 4px 12px 0; font-size: 12px; color: var(--muted); flex-wrap: wrap; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 5px; }

/* timeline */
/* Fixed layout: stepping re-marks rows, and an auto table would be re-measured every time. */
table { border-collapse: collapse; width: 100%; font-family: var(--mono); font-size: 12px; table-layout: fixed; }
col.c-seq { width: 42px; } col.c-time { width: 62px; } col.c-run { width: 52px; } col.c-reason { width: 188px; }
td { overflow: hidden; text-overflow: ellipsis; }
th { position: sticky; top: 0; background: var(--panel2); color: var(--muted); font-weight: 500;
  text-align: left; padding: 4px 6px; z-index: 1; }
td { padding: 3px 5px; border-top: 1px solid #1a212b; white-space: nowrap; }
tbody tr { cursor: pointer; }
tbody tr:hover { background: #18202b; }
/* Dim with colour, not opacity: opacity on 1 000 rows makes every step a 25 ms re-layout. */
tbody tr.future td, tbody tr.future td b, tbody tr.future td[class^="r-"] { color: #465162; }
tbody tr.selected { background: #2a2210; }
tbody tr.selected td:first-child { box-shadow: inset 3px 0 0 var(--amber); }
td.num { color: var(--muted); text-align: right; }
td.path { color: var(--muted); } td.path b { color: var(--text); font-weight: 500; }
.r-cont { color: var(--blue); } .r-ok { color: var(--green); } .r-fail { color: var(--red); }
.r-abort { color: var(--violet); } .r-step { color: var(--muted); } .r-none { color: var(--red); }

/* messages */
.msg { border: 1px solid var(--line); border-left: 3px solid var(--dim); border-radius: 6px; margin: 0 0 8px;
  background: var(--panel2); }
.msg.user { border-left-color: var(--blue); } .msg.assistant { border-left-color: var(--amber); }
.msg.new { box-shadow: 0 0 0 1px var(--amber); }
.msg-head { display: flex; gap: 10px; padding: 3px 9px; font-family: var(--mono); font-size: 11.5px;
  color: var(--muted); border-bottom: 1px solid #1f2733; }
.msg-head .role { color: var(--text); font-weight: 700; }
.msg-head .tag { color: var(--amber); }
.block { padding: 6px 9px; }
.block + .block { border-top: 1px dashed #243041; }
.block .kind { font-family: var(--mono); font-size: 11.5px; color: var(--cyan); margin-bottom: 2px; }
.block .kind.err { color: var(--red); }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12.5px/1.5 var(--mono); color: var(--text); }
pre.thinking { color: var(--muted); font-style: italic; }
.more { margin-top: 4px; background: none; border: 1px solid var(--line); color: var(--muted);
  border-radius: 4px; font: 11.5px var(--mono); cursor: pointer; }
.empty { color: var(--muted); font-style: italic; padding: 10px; }

/* side panel */
dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; font-family: var(--mono); font-size: 12.5px; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-word; }
#tokens svg { display: block; width: 100%; height: 170px; font-family: var(--mono); }
#tokens .bar-in { fill: #3f6a94; } #tokens .bar-cache { fill: #7a5fb0; } #tokens .bar-out { fill: var(--amber); }
#tokens rect.frame { fill: none; stroke: none; }
#tokens .cur rect.frame { stroke: #fff; stroke-width: 1.5; }
#tokens text { fill: var(--muted); font-size: 10.5px; }
#tokens .run-sep { stroke: var(--line); stroke-dasharray: 3 3; }
.keys { color: var(--muted); font-size: 12px; }
kbd { font-family: var(--mono); font-size: 11px; border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; }
`;
