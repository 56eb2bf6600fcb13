/** The inspector page's stylesheet (served as /assets/style.css; no inline styles: see the CSP). */
export const PAGE_CSS = `
:root { color-scheme: light; --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --accent: #0969da; --bg2: #f6f8fa; --warn: #9a6700; --bad: #cf222e; --good: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: #fff; }
code, pre, .log-row, .badge { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12px; }
pre { white-space: pre-wrap; margin: 0; max-height: 12em; overflow: auto; }
pre.result, pre.preview { max-height: 28em; background: var(--bg2); padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
pre.preview .add { color: var(--good); background: #dafbe1; }
pre.preview .del { color: var(--bad); background: #ffebe9; }
pre.preview .hunk { color: #0550ae; }
pre.preview .meta { color: var(--muted); }
header { padding: 8px 14px; border-bottom: 1px solid var(--line); background: var(--bg2); }
header .title { font-family: monospace; }
.live-badge { padding: 1px 8px; border-radius: 10px; background: var(--line); font-size: 11px; text-transform: uppercase; }
.live-badge.on { background: var(--good); color: #fff; }
.status { color: var(--muted); margin-left: 8px; }
.timeline { display: flex; gap: 8px; align-items: center; padding: 6px 14px; border-bottom: 1px solid var(--line); }
.timeline input[type=range] { flex: 1; }
.timeline .position { font-family: monospace; min-width: 22em; }
.approvals:not(:empty) { padding: 6px 14px; background: #fff8c5; border-bottom: 1px solid #d4a72c; }
.approvals h2 { margin: 0 0 4px; font-size: 13px; }
.question { padding: 2px 0; }
.answers button, .pager button { margin-left: 4px; }
button.answer { border: 1px solid var(--line); border-radius: 6px; padding: 2px 10px; cursor: pointer; background: #fff; }
button.answer.allow-once, button.answer.allow-always { border-color: var(--good); color: var(--good); }
button.answer.deny { border-color: var(--bad); color: var(--bad); }
main { display: grid; grid-template-columns: minmax(260px, 1fr) minmax(360px, 1.6fr) minmax(360px, 1.4fr); gap: 0; height: calc(100vh - 90px); min-height: 420px; }
.col { overflow: auto; padding: 8px 12px; border-right: 1px solid var(--line); }
h2 { font-size: 13px; margin: 8px 0 4px; }
h3 { font-size: 12px; margin: 10px 0 4px; }
.muted { color: var(--muted); }
ul.tree, ul.tree ul { list-style: none; padding-left: 12px; margin: 0; }
ol.calls { padding-left: 36px; margin: 0; }
ol.calls li.failed .badge { background: #ffebe9; color: var(--bad); }
ol.calls li.ok .badge { background: #dafbe1; color: var(--good); }
ol.calls li.exited .badge { background: #fff8c5; color: #7d4e00; }
button.actor { all: unset; cursor: pointer; display: block; padding: 1px 4px; border-radius: 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 100%; }
button.actor:hover { background: var(--bg2); }
button.actor.selected { background: #ddf4ff; outline: 1px solid var(--accent); }
.badge { background: var(--bg2); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
.field { display: flex; gap: 8px; padding: 2px 0; }
.field .name { color: var(--muted); min-width: 7em; }
.field .value { flex: 1; min-width: 0; overflow-wrap: anywhere; }
.error { color: var(--bad); }
.diagram { margin: 8px 0; border: 1px solid var(--line); border-radius: 6px; padding: 4px; background: #fff; }
.diagram svg { width: 100%; height: auto; max-height: 60vh; display: block; }
.diagram .zoom { text-align: right; padding: 0 2px 4px; }
.diagram .zoom button { border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; min-width: 2em; }
.diagram-canvas { overflow: auto; max-height: 70vh; }
.conversation .conv-user { font-weight: 600; margin-top: 6px; overflow-wrap: anywhere; }
.conversation pre.conv-model { max-height: none; margin: 2px 0 4px 10px; font-family: inherit; font-size: 13px; }
.diagram svg g.visited > rect { fill: #dafbe1; }
.diagram svg g.current-parent > rect { stroke: #d4a72c; stroke-width: 2.5; }
.diagram svg g.current > rect { fill: #fff8c5; stroke: #d4a72c; stroke-width: 4; }
.stage-bar { display: flex; height: 14px; border-radius: 3px; overflow: hidden; border: 1px solid var(--line); }
.stage-bar .seg { display: block; min-width: 2px; }
.seg.validating, .dot.validating { background: #8250df; }
.seg.preExecute, .dot.preExecute { background: #0969da; }
.seg.awaitingApproval, .dot.awaitingApproval { background: #d4a72c; }
.seg.guard, .dot.guard { background: #bf3989; }
.seg.executing, .dot.executing { background: #1a7f37; }
.seg.postExecute, .dot.postExecute { background: #57606a; }
.seg.finalizing, .dot.finalizing { background: #953800; }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 2px; margin-right: 6px; }
.stages table { border-collapse: collapse; margin-top: 6px; }
.stages td, .stages th { padding: 1px 10px 1px 0; text-align: left; }
.stages td.num { text-align: right; font-family: monospace; }
.stages tr.total td { border-top: 1px solid var(--line); }
.log-col { display: flex; flex-direction: column; border-right: 0; }
.log-scroll { position: relative; flex: 1; overflow-y: auto; min-height: 200px; border: 1px solid var(--line); border-radius: 4px; }
.log-spacer { position: relative; }
.log-row, .log-head { display: flex; gap: 6px; height: 22px; line-height: 22px; padding: 0 6px; white-space: nowrap; cursor: pointer; }
.log-row { position: absolute; left: 0; right: 0; }
.log-head { color: var(--muted); cursor: default; font-size: 11px; }
.log-row:hover { background: var(--bg2); }
.log-row.future { opacity: 0.38; }
.log-row.at { background: #fff8c5; }
.log-row.selected { box-shadow: inset 3px 0 0 var(--accent); }
.log-row.error .code { color: var(--bad); font-weight: bold; }
.log-row .seq, .log-head .seq { width: 3.5em; text-align: right; color: var(--muted); flex: none; }
.log-row .type, .log-head .type { width: 16em; flex: none; overflow: hidden; text-overflow: ellipsis; }
.log-row .call, .log-head .call { width: 7em; flex: none; overflow: hidden; text-overflow: ellipsis; }
.log-row .code, .log-head .code { width: 8em; flex: none; overflow: hidden; text-overflow: ellipsis; }
.log-row .text { flex: 1; overflow: hidden; text-overflow: ellipsis; color: var(--muted); }
.pager { margin-top: 6px; }
.live-stages { margin: 0; padding-left: 20px; font-family: monospace; }
@media (max-width: 1000px) { main { grid-template-columns: 1fr; height: auto; } .log-scroll { height: 50vh; } }
`;
