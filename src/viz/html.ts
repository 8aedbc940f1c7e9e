import { createHash } from 'node:crypto';
import type { AnyStateMachine } from 'xstate';
import { REASON_DOCS } from '../machines/reasons.ts';
import type { LogRecord } from '../store/records.ts';
import { chartSvg, reasonClass } from './chartSvg.ts';
import { chartOf } from './edgeCatalog.ts';
import { jsonForScript } from './escape.ts';
import { edgeCounts, viewerData } from './sessionView.ts';
import { VIEWER_CSS } from './viewerCss.ts';
import { VIEWER_SCRIPT_PANELS } from './viewerPanels.ts';
import { VIEWER_SCRIPT_CORE } from './viewerScript.ts';

export interface ViewerOptions {
  /** The chart to draw the session over (default: the query loop). */
  machine?: AnyStateMachine;
}

const LEGEND = `<div class="legend">
<span><i style="background:#f5b841"></i>taken up to the selected step (×count)</span>
<span><i style="background:#fff"></i>last transition</span>
<span class="r-cont">continuation</span><span class="r-step">within a turn</span>
<span class="r-ok">completed</span><span class="r-fail">failed</span><span class="r-abort">aborted</span>
</div>`;

const BODY = (svg: string) => `<header>
<h1><span class="brand">reloop</span><span id="title"></span></h1>
<span class="meta" id="session-meta"></span>
<span class="chips" id="runs"></span>
</header>
<div class="warn" id="unknown" hidden></div>
<main>
<section id="chart-panel"><h2>Query-loop chart <span class="sub" id="chart-sub"></span></h2>${LEGEND}
${svg}
</section>
<section id="stepper">
<button id="first" title="first record (Home)">|◀</button><button id="prev-t" title="previous transition (Shift+←, [)">◀◀</button>
<button id="prev" title="previous record (←)">◀</button>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="record">
<button id="next" title="next record (→)">▶</button><button id="next-t" title="next transition (Shift+→, ])">▶▶</button>
<button id="last" title="last record (End)">▶|</button>
<span id="step-label"></span>
</section>
<section id="timeline-panel"><h2>Transitions <span class="sub">click to step there</span></h2>
<div class="scroll" id="timeline-scroll"><table><colgroup><col class="c-seq"><col class="c-time"><col class="c-run"><col><col class="c-reason"></colgroup><thead><tr><th>seq</th><th>time</th><th>run</th><th>from → to</th><th>reason</th></tr></thead>
<tbody id="timeline-body"></tbody></table></div>
</section>
<section id="messages-panel"><h2>Messages <span class="sub" id="messages-sub"></span></h2>
<div class="scroll" id="messages"></div>
</section>
<section id="side-panel"><h2>Selected record</h2>
<div class="box" id="step"></div>
<h2>Usage so far (session)</h2><div class="box" id="usage"></div>
<h2>Tokens per turn <span class="sub"><span style="color:#6cb6ff">in</span> · <span style="color:#c297ff">cache</span> · <span style="color:#f5b841">out</span></span></h2>
<div class="box" id="tokens"><svg id="tokens-svg" role="img" aria-label="tokens per turn"></svg></div>
<div class="box keys"><kbd>←</kbd> <kbd>→</kbd> record · <kbd>Shift</kbd>+arrows or <kbd>[</kbd> <kbd>]</kbd> transition · <kbd>Home</kbd> <kbd>End</kbd></div>
</section>
</main>`;

/**
 * One self-contained HTML page for a session: inline CSS, inline script, inline SVG, no URL
 * anywhere, so it works offline and can be mailed around. The log enters the page only as
 * escaped JSON in a `type="application/json"` element (never executed, never parsed as HTML);
 * the Content-Security-Policy allows no network and only the page's own script (by hash), so
 * even a mistake in escaping could not load or run anything.
 */
export function renderViewerHtml(records: readonly LogRecord[], options: ViewerOptions = {}): string {
  const chart = chartOf(options.machine);
  const data = {
    ...viewerData(records, chart),
    reasonClass: Object.fromEntries(Object.keys(REASON_DOCS).map((r) => [r, reasonClass(r)])),
  };
  const script = `(() => {\n${VIEWER_SCRIPT_CORE}\n${VIEWER_SCRIPT_PANELS}\n})();`;
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'`;
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
${BODY(chartSvg(chart, edgeCounts(records)))}
<script type="application/json" id="reloop-data">${jsonForScript(data)}</script>
<script>${script}</script>
</body>
</html>
`;
}
