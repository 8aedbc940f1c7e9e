export { toDot } from './dot.ts';
export { type ChartEdge, catalogProblems, chartOf, edgeCatalog, transitionKey } from './edgeCatalog.ts';
export { renderViewerHtml, type ViewerOptions } from './html.ts';
export { toMermaid } from './mermaid.ts';
export { edgeCounts, sessionView } from './sessionView.ts';
