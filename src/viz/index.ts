export { DIAGRAM_VIEWS, type DiagramViewName, diagramEdges } from './diagramView.ts';
export { toDot } from './dot.ts';
export { type ChartEdge, catalogProblems, chartOf, edgeCatalog, transitionKey } from './edgeCatalog.ts';
export { type ForkDiff, forkDiff } from './forkDiff.ts';
export { renderViewerHtml, renderViewerPage, type ViewerOptions } from './html.ts';
export { toMermaid } from './mermaid.ts';
export { edgeCounts, sessionView } from './sessionView.ts';
export { indexRecords, ViewerIndex } from './viewerIndex.ts';
