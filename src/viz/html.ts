import { createHash } from 'node:crypto';
import type { AnyStateMachine } from 'xstate';
import { REASON_DOCS } from '../machines/reasons.ts';
import type { LogRecord } from '../store/records.ts';
import { layoutChart } from './chartLayout.ts';
import { chartSvg, reasonClass } from './chartSvg.ts';
import { type Chart, chartOf } from './edgeCatalog.ts';
import { jsonForScript } from './escape.ts';
import { type ForkDiff, forkDiff } from './forkDiff.ts';
import { encodeChunk } from './viewerBundle.ts';
import { VIEWER_JS_DATA } from './viewerClientData.ts';
import { VIEWER_JS_DETAIL } from './viewerClientDetail.ts';
import { VIEWER_JS_MAIN } from './viewerClientMain.ts';
import { VIEWER_JS_TIMELINE } from './viewerClientTimeline.ts';
import { VIEWER_CSS } from './viewerCss.ts';
import { indexRecords, type ParentRef, type ViewerIndex } from './viewerIndex.ts';

/** The whole page script, in one piece: the CSP allows exactly this text (by hash). */
export const VIEWER_SCRIPT = `(() => {\n${VIEWER_JS_DATA}\n${VIEWER_JS_TIMELINE}\n${VIEWER_JS_DETAIL}\n${VIEWER_JS_MAIN}\n})();`;
const SCRIPT_HASH = createHash('sha256').update(VIEWER_SCRIPT, 'utf8').digest('base64');

export type SessionRole = 'main' | 'source' | 'child';

export interface ViewerOptions {
  /** The chart to draw the session over (default: the query loop). */
  machine?: AnyStateMachine;
  /** Other sessions the page holds and can switch to: a fork's source, child sessions. */
  related?: { records: readonly LogRecord[]; role: Exclude<SessionRole, 'main'> }[];
  /** Served by `reloop serve`: where the page follows the session (see serve's API). */
  live?: { events: string; view: string };
  /** gzip level of the embedded data (1 fast … 9 small). */
  level?: number;
}

/** One session of a page, already indexed (`reloop serve` keeps an index per session). */
export interface PageSession {
  index: ViewerIndex;
  role: SessionRole;
}

const BODY = (svgs: string) => `<div id="loading">opening the session…</div>
<header>
<h1><span class="brand">reloop</span><span id="title"></span></h1>
<select id="session-pick" aria-label="session" hidden></select>
<span class="meta" id="session-meta"></span>
<span class="chips" id="runs"></span>
<span id="live"></span>
</header>
<div class="warn" id="unknown" hidden></div>
<div id="stepper" role="group" aria-label="step through the records">
<button id="first" title="first record (Home)">|◀</button><button id="prev-t" title="previous transition (Shift+←, [)">◀◀</button>
<button id="prev" title="previous record (←)">◀</button>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="record">
<button id="next" title="next record (→)">▶</button><button id="next-t" title="next transition (Shift+→, ])">▶▶</button>
<button id="last" title="last record (End)">▶|</button>
<span id="step-label"></span>
</div>
<main>
<section id="chart-panel"><h2>Chart <span class="tabs" id="chart-views"><button data-view="overview" class="on" title="failure edges folded per terminal">overview</button><button data-view="full" title="every edge of the chart">full</button></span>
<span class="legend" title="click a state or an edge to filter the timeline"><span class="r-cont">continuation</span><span class="r-step">step</span><span class="r-ok">completed</span><span class="r-fail">failed</span><span class="r-abort">aborted</span></span>
<span class="sub" id="chart-sub"></span></h2>
<div class="chart-box">${svgs}</div>
</section>
<section id="detail-panel"><h2><span class="tabs" id="tabs"><button data-tab="record" class="on">record</button><button data-tab="messages">messages</button><button data-tab="timing">turn timing</button><button data-tab="fork" id="tab-fork" hidden>fork diff</button></span>
<span class="sub"><kbd>←</kbd><kbd>→</kbd> record · <kbd>↑</kbd><kbd>↓</kbd> timeline row · <kbd>Shift</kbd>+arrows transition · <kbd>/</kbd> search</span></h2>
<div class="pane" id="pane-record"></div><div class="pane" id="pane-messages" hidden></div>
<div class="pane" id="pane-timing" hidden></div><div class="pane" id="pane-fork" hidden></div>
</section>
<section id="timeline-panel"><h2>Timeline <span class="sub" id="tl-count"></span></h2>
<div id="filters">
<input id="f-text" type="search" placeholder="search the raw JSON…" aria-label="search">
<select id="f-type" aria-label="record type"></select><select id="f-reason" aria-label="reason"></select><select id="f-tool" aria-label="tool"></select>
<button class="chip" id="f-chart" hidden></button><button class="mini" id="f-clear">clear</button>
</div>
<div class="vlist" id="tl-scroll"><div id="tl-spacer"></div><div id="tl-rows"></div><div class="hint" id="tl-empty" hidden>no record matches</div></div>
</section>
</main>`;

function chartData(chart: Chart) {
  return {
    id: chart.id,
    states: chart.states.map((s) => s.id),
    edges: chart.edges.map((e) => ({ id: e.id, from: e.from, to: e.to, reason: e.reason ?? '' })),
    reasonClass: Object.fromEntries(Object.keys(REASON_DOCS).map((r) => [r, reasonClass(r)])),
    reasonDocs: REASON_DOCS,
  };
}

/**
 * One self-contained HTML page holding one or more sessions (a fork and its source, a session
 * and its children): inline CSS, script and SVG, no URL anywhere unless served live, so it
 * works offline and can be mailed around. Log data enters the page only as gzip+base64 chunks
 * and escaped JSON in non-executing script elements; the script puts it in the DOM as text.
 * The Content-Security-Policy allows no network (but the serving origin, when live) and only
 * the page's own script, by hash.
 */
export function renderViewerPage(
  sessions: readonly PageSession[],
  options: { chart: Chart; fork?: ForkDiff | null; live?: ViewerOptions['live']; level?: number },
): string {
  const { chart } = options;
  const manifest = {
    v: 1,
    chart: chartData(chart),
    sessions: sessions.map((s, k) => {
      const meta = s.index.meta();
      return {
        id: meta.id,
        title: meta.title,
        role: s.role,
        parent: meta.parent satisfies ParentRef | null,
        chunk: `reloop-chunk-${k}`,
      };
    }),
    fork: options.fork ?? null,
    live: options.live ?? null,
  };
  const chunks = sessions
    .map(
      (s, k) =>
        `<script type="application/octet-stream" id="reloop-chunk-${k}">${encodeChunk(s.index.chunk(), options.level)}</script>`,
    )
    .join('\n');
  const svgs = `${chartSvg(chart, layoutChart(chart, 'overview'))}\n${chartSvg(chart, layoutChart(chart, 'full'))}`;
  const connect = options.live ? "connect-src 'self'; " : '';
  const csp = `default-src 'none'; ${connect}style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reloop session viewer</title>
<style>${VIEWER_CSS}</style>
</head>
<body>
${BODY(svgs)}
<script type="application/json" id="reloop-data">${jsonForScript(manifest)}</script>
${chunks}
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}

/** The viewer page of a session's records (and of the sessions related to it). */
export function renderViewerHtml(records: readonly LogRecord[], options: ViewerOptions = {}): string {
  const chart = chartOf(options.machine);
  const related = options.related ?? [];
  const source = related.find((r) => r.role === 'source');
  const sessions: PageSession[] = [
    { index: indexRecords(records, chart), role: 'main' },
    ...related.map((r) => ({ index: indexRecords(r.records, chart), role: r.role })),
  ];
  return renderViewerPage(sessions, {
    chart,
    fork: source ? forkDiff(records, source.records) : null,
    live: options.live,
    level: options.level,
  });
}
