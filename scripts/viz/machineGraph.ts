/**
 * Reads an XState v5 machine into a renderer-neutral graph: the state tree and every transition
 * the machine can take, labelled the way a statechart is read (`EVENT [guard]`).
 *
 * Everything comes from the machine object (`machine.root` and its `StateNode`s), never from a
 * hand-kept list, so a diagram cannot drift from the code it draws. Order is document order
 * (the order of the machine config), which is stable and is also the order XState tries guarded
 * candidates in, so the diagrams read top to bottom the way the machine decides.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

/**
 * How a transition is triggered; the renderers style each kind differently. `actor*` kinds are
 * the `xstate.done.actor.*` / `xstate.error.actor.*` / `xstate.snapshot.*` events: an invoke's
 * `onDone`/`onError`/`onSnapshot`, or an `on` handler for a spawned child's completion.
 */
export type TransitionKind = 'event' | 'always' | 'after' | 'actorDone' | 'actorError' | 'actorSnapshot' | 'stateDone';

export type StateKind = 'atomic' | 'compound' | 'parallel' | 'final' | 'history';

export interface VizState {
  /** Unique within the graph and safe as a Mermaid identifier: the path joined with `_`. */
  readonly id: string;
  /** The state's key, as written in the machine config. */
  readonly key: string;
  readonly path: readonly string[];
  readonly kind: StateKind;
  /** For history states. */
  readonly history?: 'shallow' | 'deep';
  /** Id of the child entered first, for compound states. */
  readonly initial?: string;
  /** One line per invoked actor, e.g. `invoke fetchUser`. */
  readonly invokes: readonly string[];
  /** The state's `description` (XState config), one entry per line: drawn as a note. */
  readonly notes: readonly string[];
  readonly children: readonly VizState[];
}

export interface VizTransition {
  /** Id of the state that declares the transition; the machine's root id for root-level ones. */
  readonly source: string;
  /** Id of the target; equal to `source` for a targetless transition (drawn as a self-loop). */
  readonly target: string;
  readonly kind: TransitionKind;
  /** `PRE.DECIDED`, `always`, `after hookTimeout`, `done: fetchUser`, `error: fetchUser`, `onDone`. */
  readonly trigger: string;
  /**
   * Guard name (`hasGuards`, `not(a)`, `and(a, b)`), or `else` for an unguarded fallback after guarded
   * candidates (dsh's machines name every guard, fallbacks included, so theirs never read `else`).
   */
  readonly guard?: string;
  /** True when the transition has no target: it runs actions without leaving the state. */
  readonly targetless: boolean;
}

export interface MachineGraph {
  /** The machine's `id`. */
  readonly machineId: string;
  /** The machine itself as the outermost state; its `id` is the source of root-level transitions. */
  readonly root: VizState;
  readonly transitions: readonly VizTransition[];
}

// Words with a meaning in Mermaid's state-diagram grammar; a state id equal to one gets a suffix.
const mermaidKeywords = new Set(['state', 'note', 'direction', 'class', 'classdef', 'style', 'end', 'as', 'left', 'right', 'of', 'default', 'hide', 'click', 'root']);

/** Hands out ids that are unique in one graph, deterministic for a given machine. */
class IdAllocator {
  private readonly used = new Set<string>();

  take(wanted: string): string {
    let base = wanted.replace(/[^A-Za-z0-9_]/g, '_') || 'state';
    if (/^[0-9]/.test(base)) base = `s_${base}`;
    if (mermaidKeywords.has(base.toLowerCase())) base = `${base}_`;
    let id = base;
    for (let n = 2; this.used.has(id); n++) id = `${base}_${n}`;
    this.used.add(id);
    return id;
  }
}

/** Reads `machine.root` recursively into a {@link MachineGraph}. */
export function readMachineGraph(machine: AnyStateMachine): MachineGraph {
  const ids = new IdAllocator();
  const idOf = new Map<AnyStateNode, string>();

  // Ids for every state first (document order), so the root's id can never steal a state's name.
  const assign = (node: AnyStateNode): void => {
    for (const child of childNodes(node)) {
      idOf.set(child, ids.take(child.path.join('_')));
      assign(child);
    }
  };
  assign(machine.root);
  idOf.set(machine.root, ids.take(machine.root.id || 'machine'));

  const id = (node: AnyStateNode): string => {
    const found = idOf.get(node);
    if (found === undefined) throw new Error(`viz: transition target #${node.id} is not a state of machine #${machine.id}`);
    return found;
  };

  const toState = (node: AnyStateNode): VizState => {
    const initialTarget = node.type === 'compound' ? node.initial.target[0] : undefined;
    return {
      id: id(node),
      key: node === machine.root ? machine.id : node.key,
      path: node.path,
      kind: node.type,
      ...(node.type === 'history' ? { history: node.history === 'deep' ? 'deep' : 'shallow' } : {}),
      ...(initialTarget ? { initial: id(initialTarget) } : {}),
      invokes: node.invoke.map((inv, i) => invokeLine(node, inv.id, inv.src, i)),
      notes: node.description ? node.description.split('\n').map((l) => l.trim()).filter(Boolean) : [],
      children: childNodes(node).map(toState),
    };
  };

  const transitions: VizTransition[] = [];
  const collect = (node: AnyStateNode): void => {
    for (const [descriptor, candidates] of node.transitions) {
      pushCandidates(transitions, node, descriptor, candidates, id);
    }
    if (node.always) pushCandidates(transitions, node, null, node.always, id);
    for (const child of childNodes(node)) collect(child);
  };
  collect(machine.root);

  return { machineId: machine.id, root: toState(machine.root), transitions };
}

type Candidate = AnyStateNode['transitions'] extends Map<string, (infer T)[]> ? T : never;

function childNodes(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states) as AnyStateNode[];
}

function pushCandidates(
  out: VizTransition[],
  node: AnyStateNode,
  descriptor: string | null,
  candidates: readonly Candidate[],
  id: (node: AnyStateNode) => string,
): void {
  let previousGuarded = false;
  for (const t of candidates) {
    const { kind, trigger } = describeTrigger(node, descriptor, t);
    const named = guardName(t.guard);
    // An unguarded candidate after guarded ones is taken exactly when none of them passed.
    const guard = named ?? (previousGuarded ? 'else' : undefined);
    previousGuarded = named !== undefined;
    const source = id(node);
    const targets = t.target && t.target.length > 0 ? t.target.map(id) : undefined;
    for (const target of targets ?? [source]) {
      out.push({ source, target, kind, trigger, ...(guard ? { guard } : {}), targetless: targets === undefined });
    }
  }
}

function describeTrigger(node: AnyStateNode, descriptor: string | null, t: Candidate): { kind: TransitionKind; trigger: string } {
  if (descriptor === null) return { kind: 'always', trigger: 'always' };
  if ('delay' in t) {
    const delay = (t as { delay: unknown }).delay;
    return { kind: 'after', trigger: typeof delay === 'number' ? `after ${delay}ms` : `after ${String(delay)}` };
  }
  const actorEvent = /^xstate\.(done\.actor|error\.actor|snapshot)\.(.*)$/.exec(descriptor);
  if (actorEvent) {
    const invokeId = actorEvent[2] ?? '';
    const index = node.invoke.findIndex((inv) => inv.id === invokeId);
    const inv = node.invoke[index];
    const name = inv ? invokeName(node, inv.id, inv.src, index) : invokeId;
    if (actorEvent[1] === 'done.actor') return { kind: 'actorDone', trigger: `done: ${name}` };
    if (actorEvent[1] === 'error.actor') return { kind: 'actorError', trigger: `error: ${name}` };
    return { kind: 'actorSnapshot', trigger: `snapshot: ${name}` };
  }
  if (descriptor.startsWith('xstate.done.state.')) return { kind: 'stateDone', trigger: 'onDone' };
  return { kind: 'event', trigger: descriptor };
}

/** The id XState makes up for an invoke without one; such ids say nothing to a reader. */
function isGeneratedInvokeId(node: AnyStateNode, invokeId: string, index: number): boolean {
  return invokeId === `${index}.${node.id}`;
}

function srcName(src: unknown): string | undefined {
  return typeof src === 'string' && !src.startsWith('xstate.invoke.') ? src : undefined;
}

/** What a reader knows the invoked actor by: its own id, else its `src` name from `setup({ actors })`. */
function invokeName(node: AnyStateNode, invokeId: string, src: unknown, index: number): string {
  if (!isGeneratedInvokeId(node, invokeId, index)) return invokeId;
  return srcName(src) ?? `inline actor ${index}`;
}

function invokeLine(node: AnyStateNode, invokeId: string, src: unknown, index: number): string {
  const name = srcName(src) ?? 'inline actor';
  return isGeneratedInvokeId(node, invokeId, index) || invokeId === name ? `invoke ${name}` : `invoke ${name} as ${invokeId}`;
}

/**
 * A guard as written: `'name'` and `{ type: 'name' }` give `name`; the higher-order guards
 * `not`/`and`/`or` are functions that carry their operands in `.guards`, `stateIn` carries
 * `.stateValue`; any other function is an inline guard.
 */
export function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const g = guard as { name: string; guards?: unknown[]; stateValue?: unknown; check?: unknown };
    if (g.check !== undefined && Array.isArray(g.guards)) {
      return `${g.name}(${g.guards.map((inner) => guardName(inner) ?? '?').join(', ')})`;
    }
    if (g.check !== undefined && g.stateValue !== undefined) {
      return `stateIn(${typeof g.stateValue === 'string' ? g.stateValue : JSON.stringify(g.stateValue)})`;
    }
    // Object-literal arrows get the property's name (`guard`), which says nothing.
    return g.name && g.name !== 'guard' ? g.name : 'inline';
  }
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') {
    return (guard as { type: string }).type;
  }
  return 'inline';
}

/** The label of a transition as drawn: `trigger [guard]`. */
export function transitionLabel(t: VizTransition): string {
  return t.guard ? `${t.trigger} [${t.guard}]` : t.trigger;
}

/** Every state of the tree below (and including) `state`, depth first in document order. */
export function allStates(state: VizState): VizState[] {
  return [state, ...state.children.flatMap(allStates)];
}
