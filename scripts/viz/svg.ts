/**
 * An SVG picture of a machine graph, laid out by ELK's layered algorithm and drawn here from
 * ELK's coordinates: compound states are ELK compound nodes (hierarchy handled across levels,
 * so transitions may cross state boundaries), transition labels are ELK edge labels, so the
 * layout leaves room for them.
 *
 * Text is never measured (no browser, no font files): widths are estimated for a monospace
 * font, which every platform has and whose advance is ~0.6 em, so the estimate holds.
 * Transitions between the same two states share one edge with one label line each, which
 * keeps the fan-in to a state like `finalizing` readable. Targetless transitions are self-loops.
 */
import elkBundle from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkNode, ElkPoint } from 'elkjs/lib/elk-api.js';
import type { AnyStateMachine } from 'xstate';
import { readMachineGraph, transitionLabel, type MachineGraph, type TransitionKind, type VizState, type VizTransition } from './machineGraph.js';
import { stateName } from './mermaid.js';

// The bundle is CommonJS and sets `ELK.default = ELK`, so `.default` is the constructor whichever
// interop (Node's, or a bundler's honouring `__esModule`) loaded it; TypeScript types it that way.
const ELK = elkBundle.default;

const FONT = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace";
const FONT_SIZE = 12;
const SMALL_FONT_SIZE = 11;
// Monospace advance is 0.6 em in DejaVu Sans Mono, Menlo and Courier; 0.62 leaves room for a wider fallback.
const CHAR_WIDTH = 0.62;
const SMALL_LINE_HEIGHT = 14;
const NODE_PAD_X = 14;
const NODE_HEIGHT = 34;
const TITLE_HEIGHT = 28;
const INITIAL_SIZE = 12;
const LABEL_PAD = 3;

type EdgeStyleKind = TransitionKind | 'initial';

const edgeStyles: Record<EdgeStyleKind, { color: string; dash?: string; legend: string }> = {
  event: { color: '#24292f', legend: 'event' },
  always: { color: '#57606a', dash: '6 4', legend: 'always (eventless)' },
  after: { color: '#9a6700', dash: '2 3', legend: 'after (delayed)' },
  actorDone: { color: '#1a7f37', legend: 'actor done' },
  actorError: { color: '#cf222e', legend: 'actor error' },
  actorSnapshot: { color: '#8250df', legend: 'actor snapshot' },
  stateDone: { color: '#1a7f37', legend: 'state done (onDone)' },
  initial: { color: '#24292f', legend: 'initial' },
};

const layoutOptions: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.layered.spacing.edgeNodeBetweenLayers': '18',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '12',
  'elk.spacing.nodeNode': '28',
  'elk.spacing.edgeNode': '16',
  'elk.spacing.edgeEdge': '12',
  'elk.spacing.edgeLabel': '4',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.randomSeed': '1',
};

/** One drawn edge: every transition between the same two states, or an initial-state arrow. */
interface DrawnEdge {
  readonly id: string;
  readonly kind: EdgeStyleKind;
  readonly source: string;
  readonly target: string;
  readonly lines: readonly { text: string; kind: EdgeStyleKind }[];
}

/** The SVG picture of a machine, laid out by ELK; deterministic for a given machine. */
export async function machineToSvg(machine: AnyStateMachine): Promise<string> {
  return graphToSvg(readMachineGraph(machine));
}

/** The SVG picture of an already read {@link MachineGraph}. */
export async function graphToSvg(graph: MachineGraph): Promise<string> {
  const statesById = new Map<string, VizState>();
  const edges = drawnEdges(graph);
  const elkGraph: ElkNode = {
    id: 'graph',
    layoutOptions: { ...layoutOptions, 'elk.padding': '[top=12,left=12,bottom=12,right=12]' },
    children: [elkNode(graph.root, statesById, incomingCounts(edges))],
    edges: edges.map(elkEdge),
  };
  const laidOut = await new ELK().layout(elkGraph);
  return render(graph, laidOut, edges, statesById);
}

const nodeId = (stateId: string): string => `s:${stateId}`;
const initialId = (stateId: string): string => `i:${stateId}`;

function drawnEdges(graph: MachineGraph): DrawnEdge[] {
  const edges: DrawnEdge[] = [];
  const initials = (state: VizState): void => {
    if (state.initial) edges.push({ id: `e${edges.length}`, kind: 'initial', source: initialId(state.id), target: nodeId(state.initial), lines: [] });
    state.children.forEach(initials);
  };
  initials(graph.root);
  // Map keeps first-seen order, so edges come out in document order.
  const grouped = new Map<string, VizTransition[]>();
  for (const t of graph.transitions) {
    const key = `${t.source}\u0000${t.target}`;
    grouped.set(key, [...(grouped.get(key) ?? []), t]);
  }
  for (const transitions of grouped.values()) {
    const first = transitions[0]!;
    const kinds = new Set(transitions.map((t) => t.kind));
    // A shared edge takes its line style from its transitions when they agree, else it is an event line.
    const kind: EdgeStyleKind = kinds.size === 1 ? first.kind : 'event';
    edges.push({
      id: `e${edges.length}`,
      kind,
      source: nodeId(first.source),
      target: nodeId(first.target),
      lines: transitions.map((t) => ({ text: transitionLabel(t), kind: t.kind })),
    });
  }
  return edges;
}

function textWidth(text: string, fontSize: number): number {
  return [...text].length * fontSize * CHAR_WIDTH;
}

function elkEdge(edge: DrawnEdge): ElkExtendedEdge {
  const base: ElkExtendedEdge = { id: edge.id, sources: [edge.source], targets: [edge.target] };
  if (edge.lines.length === 0) return base;
  const width = Math.max(...edge.lines.map((l) => textWidth(l.text, SMALL_FONT_SIZE))) + 2 * LABEL_PAD;
  const height = edge.lines.length * SMALL_LINE_HEIGHT + 2 * LABEL_PAD;
  // Inline: the edge runs through its label (whose background hides it there), so a label is
  // never read as belonging to the neighbouring line.
  const layout = { 'elk.edgeLabels.inline': 'true' };
  return { ...base, labels: [{ id: `${edge.id}:label`, text: edge.lines.map((l) => l.text).join('\n'), width, height, layoutOptions: layout }] };
}

/** How many drawn edges end at each node. */
function incomingCounts(edges: readonly DrawnEdge[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of edges) if (e.source !== e.target) counts.set(e.target, (counts.get(e.target) ?? 0) + 1);
  return counts;
}

/** The small lines under a state's name: its invokes, then its description (a note). */
function boxLines(state: VizState): readonly string[] {
  return state.notes.length === 0 ? state.invokes : [...state.invokes, ...state.notes.map((l) => `※ ${l}`)];
}

function elkNode(state: VizState, statesById: Map<string, VizState>, incoming: ReadonlyMap<string, number>): ElkNode {
  statesById.set(state.id, state);
  const titleWidth = textWidth(stateTitle(state), FONT_SIZE) + 2 * NODE_PAD_X;
  const invokeWidth = Math.max(0, ...boxLines(state).map((l) => textWidth(l, SMALL_FONT_SIZE) + 2 * NODE_PAD_X));
  const invokeHeight = boxLines(state).length * SMALL_LINE_HEIGHT;
  if (state.children.length === 0) {
    // A state many transitions lead to (like `finalizing`) is widened so their arrowheads do not pile up.
    const fanInWidth = ((incoming.get(nodeId(state.id)) ?? 0) + 1) * 16;
    return {
      id: nodeId(state.id),
      width: Math.ceil(Math.max(titleWidth, invokeWidth, fanInWidth, 64)),
      height: NODE_HEIGHT + (invokeHeight > 0 ? invokeHeight + 6 : 0),
    };
  }
  const top = TITLE_HEIGHT + (invokeHeight > 0 ? invokeHeight + 4 : 0);
  const children: ElkNode[] = [];
  if (state.initial) children.push({ id: initialId(state.id), width: INITIAL_SIZE, height: INITIAL_SIZE });
  children.push(...state.children.map((c) => elkNode(c, statesById, incoming)));
  return {
    id: nodeId(state.id),
    layoutOptions: {
      'elk.padding': `[top=${top},left=16,bottom=16,right=16]`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      'elk.nodeSize.minimum': `(${Math.ceil(Math.max(titleWidth, invokeWidth))}, ${top + 20})`,
      // Orthogonal regions side by side, like UML draws them.
      ...(state.kind === 'parallel' ? { 'elk.direction': 'RIGHT' } : {}),
    },
    children,
  };
}

const PARALLEL = '(parallel)';

/** The text a state's box shows as its name: a parallel state says so after its name. */
function stateTitle(state: VizState): string {
  return state.kind === 'parallel' ? `${stateName(state)} ${PARALLEL}` : stateName(state);
}

interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Fixed formatting so that the file is byte-identical across runs: at most one decimal. */
function n(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function render(graph: MachineGraph, laidOut: ElkNode, edges: readonly DrawnEdge[], statesById: ReadonlyMap<string, VizState>): string {
  // ELK gives coordinates relative to the parent node (and edges relative to their container).
  const absolute = new Map<string, Box>();
  const place = (node: ElkNode, ox: number, oy: number): void => {
    const box = { x: ox + (node.x ?? 0), y: oy + (node.y ?? 0), width: node.width ?? 0, height: node.height ?? 0 };
    absolute.set(node.id, box);
    for (const child of node.children ?? []) place(child, box.x, box.y);
  };
  place(laidOut, 0, 0);

  const body: string[] = [];
  const drawNodes = (node: ElkNode, depth: number, parent: VizState | undefined): void => {
    const box = absolute.get(node.id)!;
    if (node.id.startsWith('i:')) {
      body.push(`<circle class="initial" data-initial="${escapeXml(node.id.slice(2))}" cx="${n(box.x + box.width / 2)}" cy="${n(box.y + box.height / 2)}" r="${n(INITIAL_SIZE / 2)}"/>`);
      return;
    }
    const state = statesById.get(node.id.slice(2))!;
    // data-* attributes let tests (and a reader's tools) find a state's box in the picture.
    body.push(`<g data-state="${escapeXml(state.id)}">`, ...drawState(state, box, depth, parent?.kind === 'parallel').map((l) => `  ${l}`), '</g>');
    for (const child of node.children ?? []) drawNodes(child, depth + 1, state);
  };
  for (const child of laidOut.children ?? []) drawNodes(child, 0, undefined);

  const edgeById = new Map(edges.map((e) => [e.id, e]));
  const labels: string[] = [];
  for (const elkEdge of laidOut.edges ?? []) {
    const edge = edgeById.get(elkEdge.id)!;
    const container = absolute.get((elkEdge as { container?: string }).container ?? laidOut.id) ?? { x: 0, y: 0, width: 0, height: 0 };
    body.push(drawEdge(elkEdge, edge, container));
    for (const label of elkEdge.labels ?? []) labels.push(drawLabel(edge, { x: container.x + (label.x ?? 0), y: container.y + (label.y ?? 0), width: label.width ?? 0, height: label.height ?? 0 }));
  }

  const legend = drawLegend(edges, laidOut.height ?? 0);
  const width = Math.max(laidOut.width ?? 0, legend.width);
  const height = (laidOut.height ?? 0) + legend.height;
  const markers = (Object.keys(edgeStyles) as EdgeStyleKind[])
    .map(
      (kind) =>
        `<marker id="arrow-${kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${edgeStyles[kind].color}"/></marker>`,
    )
    .join('\n    ');

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="0 0 ${n(width)} ${n(height)}" font-family="${escapeXml(FONT)}" font-size="${FONT_SIZE}">`,
    `  <title>${escapeXml(graph.machineId)} state machine (generated by npm run viz; do not edit)</title>`,
    '  <defs>',
    `    ${markers}`,
    '    <style>',
    '      .state { fill: #ffffff; stroke: #0969da; stroke-width: 1.4; }',
    '      .final { fill: #ffffff; stroke: #0969da; stroke-width: 1.4; }',
    '      .region { stroke-dasharray: 5 4; }',
    '      .compound { stroke: #57606a; stroke-width: 1.2; }',
    '      .machine { fill: #ffffff; stroke: #24292f; stroke-width: 1.6; }',
    '      .initial { fill: #24292f; }',
    '      .name { fill: #1f2328; text-anchor: middle; dominant-baseline: central; }',
    '      .title { fill: #1f2328; font-weight: bold; dominant-baseline: central; }',
    `      .invoke { fill: #57606a; font-size: ${SMALL_FONT_SIZE}px; font-style: italic; dominant-baseline: central; }`,
    '      .edge { fill: none; stroke-width: 1.3; }',
    `      .label { font-size: ${SMALL_FONT_SIZE}px; dominant-baseline: central; }`,
    '      .label-bg { fill: #ffffff; fill-opacity: 0.92; }',
    '    </style>',
    '  </defs>',
    `  <rect x="0" y="0" width="${n(width)}" height="${n(height)}" fill="#ffffff"/>`,
    ...body.map((l) => `  ${l}`),
    ...labels.map((l) => `  ${l}`),
    ...legend.lines.map((l) => `  ${l}`),
    '</svg>',
    '',
  ].join('\n');
}

// Nested compound states get slightly darker fills so the nesting reads at a glance.
const compoundFills = ['#f6f8fa', '#eaeef2', '#dde3ea', '#d0d7de'];

function drawState(state: VizState, box: Box, depth: number, isRegion: boolean): string[] {
  const { x, y, width, height } = box;
  const out: string[] = [];
  if (state.children.length > 0) {
    const cls = depth === 0 ? 'machine' : 'compound';
    const fill = depth === 0 ? '' : ` fill="${compoundFills[Math.min(depth - 1, compoundFills.length - 1)]}"`;
    // Regions of a parallel state are dashed, as in UML.
    const region = isRegion ? ' region' : '';
    out.push(`<rect class="${cls}${region}" x="${n(x)}" y="${n(y)}" width="${n(width)}" height="${n(height)}" rx="10"${fill}/>`);
    out.push(`<text class="title" x="${n(x + 12)}" y="${n(y + TITLE_HEIGHT / 2 + 1)}">${escapeXml(stateName(state))}${state.kind === 'parallel' ? ` <tspan font-weight="normal" fill="#57606a">${PARALLEL}</tspan>` : ''}</text>`);
    boxLines(state).forEach((line, i) => {
      out.push(`<text class="invoke" x="${n(x + 12)}" y="${n(y + TITLE_HEIGHT + SMALL_LINE_HEIGHT / 2 + i * SMALL_LINE_HEIGHT - 2)}">${escapeXml(line)}</text>`);
    });
    return out;
  }
  const final = state.kind === 'final';
  // A history pseudo-state is a pill, a real state a rounded box.
  const rx = state.kind === 'history' ? height / 2 : 8;
  out.push(`<rect class="${final ? 'final' : 'state'}" x="${n(x)}" y="${n(y)}" width="${n(width)}" height="${n(height)}" rx="${n(rx)}"/>`);
  // A final state is drawn with a double border.
  if (final) out.push(`<rect class="final" x="${n(x + 3)}" y="${n(y + 3)}" width="${n(width - 6)}" height="${n(height - 6)}" rx="6"/>`);
  out.push(`<text class="name" x="${n(x + width / 2)}" y="${n(y + NODE_HEIGHT / 2)}">${escapeXml(stateName(state))}</text>`);
  if (boxLines(state).length > 0) {
    out.push(`<line x1="${n(x)}" y1="${n(y + NODE_HEIGHT - 4)}" x2="${n(x + width)}" y2="${n(y + NODE_HEIGHT - 4)}" stroke="#0969da" stroke-width="0.8"/>`);
    boxLines(state).forEach((line, i) => {
      out.push(`<text class="invoke" x="${n(x + NODE_PAD_X)}" y="${n(y + NODE_HEIGHT + SMALL_LINE_HEIGHT / 2 + i * SMALL_LINE_HEIGHT)}">${escapeXml(line)}</text>`);
    });
  }
  return out;
}

function drawEdge(elkEdge: ElkExtendedEdge, edge: DrawnEdge, offset: Box): string {
  const points: ElkPoint[] = [];
  for (const section of elkEdge.sections ?? []) {
    points.push(section.startPoint, ...(section.bendPoints ?? []), section.endPoint);
  }
  const abs = points.map((p) => ({ x: p.x + offset.x, y: p.y + offset.y }));
  const style = edgeStyles[edge.kind];
  const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
  return `<path class="edge" data-from="${escapeXml(edge.source)}" data-to="${escapeXml(edge.target)}" d="${roundedPath(abs)}" stroke="${style.color}"${dash} marker-end="url(#arrow-${edge.kind})"/>`;
}

/** An orthogonal polyline with its corners rounded, which makes crossing lines easier to follow. */
function roundedPath(points: readonly ElkPoint[]): string {
  if (points.length === 0) return '';
  const radius = 6;
  const first = points[0]!;
  const parts = [`M${n(first.x)},${n(first.y)}`];
  for (let i = 1; i < points.length - 1; i++) {
    const prev = points[i - 1]!;
    const at = points[i]!;
    const next = points[i + 1]!;
    const r = Math.min(radius, dist(prev, at) / 2, dist(at, next) / 2);
    const a = toward(at, prev, r);
    const b = toward(at, next, r);
    parts.push(`L${n(a.x)},${n(a.y)}`, `Q${n(at.x)},${n(at.y)} ${n(b.x)},${n(b.y)}`);
  }
  const last = points[points.length - 1]!;
  parts.push(`L${n(last.x)},${n(last.y)}`);
  return parts.join(' ');
}

function dist(a: ElkPoint, b: ElkPoint): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}

function toward(from: ElkPoint, to: ElkPoint, length: number): ElkPoint {
  const d = dist(from, to);
  if (d === 0) return from;
  return { x: from.x + ((to.x - from.x) * length) / d, y: from.y + ((to.y - from.y) * length) / d };
}

function drawLabel(edge: DrawnEdge, box: Box): string {
  const texts = edge.lines.map(
    (line, i) =>
      `<text class="label" x="${n(box.x + LABEL_PAD)}" y="${n(box.y + LABEL_PAD + SMALL_LINE_HEIGHT / 2 + i * SMALL_LINE_HEIGHT)}" fill="${edgeStyles[line.kind].color}">${escapeXml(line.text)}</text>`,
  );
  return `<g><rect class="label-bg" x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" rx="3"/>${texts.join('')}</g>`;
}

/** A key to the line styles, listing only the kinds this diagram uses. */
function drawLegend(edges: readonly DrawnEdge[], top: number): { lines: string[]; width: number; height: number } {
  const used = new Set<EdgeStyleKind>();
  for (const e of edges) {
    if (e.kind === 'initial') continue;
    for (const l of e.lines) used.add(l.kind);
  }
  const kinds = (Object.keys(edgeStyles) as EdgeStyleKind[]).filter((k) => used.has(k));
  const lines: string[] = [];
  let x = 16;
  const y = top + 14;
  for (const kind of kinds) {
    const style = edgeStyles[kind];
    const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
    lines.push(`<path class="edge" d="M${n(x)},${n(y)} L${n(x + 34)},${n(y)}" stroke="${style.color}"${dash} marker-end="url(#arrow-${kind})"/>`);
    lines.push(`<text class="label" x="${n(x + 40)}" y="${n(y)}" fill="${style.color}">${escapeXml(style.legend)}</text>`);
    x += 40 + textWidth(style.legend, SMALL_FONT_SIZE) + 24;
  }
  return { lines, width: x, height: kinds.length > 0 ? 30 : 0 };
}
