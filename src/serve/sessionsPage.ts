import type { SessionInfo } from '../store/types.ts';
import { escapeXml } from '../viz/escape.ts';

const CSS = `
body { margin: 0; background: #0b0f14; color: #d4dce6; font: 14px/1.5 system-ui, sans-serif; }
header { padding: 10px 18px; border-bottom: 1px solid #263040; background: #11161d; }
h1 { margin: 0; font-size: 17px; } h1 span { color: #f5b841; font-family: ui-monospace, monospace; margin-right: 8px; }
main { padding: 12px 18px; }
table { border-collapse: collapse; width: 100%; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
th { text-align: left; color: #8391a3; font-weight: 500; padding: 4px 8px; border-bottom: 1px solid #263040; }
td { padding: 4px 8px; border-bottom: 1px solid #161d27; }
td.num { text-align: right; color: #8391a3; }
a { color: #56d4dd; text-decoration: none; } a:hover { text-decoration: underline; }
.completed { color: #6bdd8b; } .failed { color: #ff7b72; } .aborted { color: #c297ff; } .running { color: #f5b841; } .idle { color: #8391a3; }
p.hint { color: #8391a3; font-size: 13px; }
`;

const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/**
 * The sessions list of `reloop serve`: a plain page (no script at all), every value from the
 * store escaped, reloaded every few seconds so a session that starts shows up.
 */
export function sessionsPage(rows: readonly SessionInfo[], storeDir: string): string {
  const body = rows
    .map((s) => {
      const href = `/sessions/${encodeURIComponent(s.id)}`;
      const fork = s.forkedFrom ? ` (fork of ${s.forkedFrom.session}@${s.forkedFrom.seq})` : '';
      return (
        `<tr><td><a href="${escapeXml(href)}">${escapeXml(s.id)}</a></td>` +
        `<td>${escapeXml(s.title || '(untitled)')}${escapeXml(fork)}</td>` +
        `<td class="${escapeXml(s.status)}">${escapeXml(s.status)}</td>` +
        `<td class="num">${s.lastSeq}</td><td class="num">${escapeXml(time(s.updated))}</td></tr>`
      );
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta http-equiv="refresh" content="5">
<title>reloop sessions</title>
<style>${CSS}</style>
</head>
<body>
<header><h1><span>reloop</span>sessions</h1></header>
<main>
<table><thead><tr><th>session</th><th>title</th><th>status</th><th>records</th><th>updated (UTC)</th></tr></thead>
<tbody>
${body || '<tr><td colspan="5">no sessions yet</td></tr>'}
</tbody></table>
<p class="hint">store ${escapeXml(storeDir)} · newest first · this list reloads every 5 s · a session's page follows it live</p>
</main>
</body>
</html>
`;
}
