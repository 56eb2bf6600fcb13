/**
 * Plans paths through a machine with xstate's graph utilities (`getShortestPaths`,
 * `getSimplePaths`), one graph per *configuration* of the machine's injected ports.
 *
 * A port answers synchronously for some questions (is there a pre-execute listener? does the guard
 * deny? did compaction shrink the prompt?); those answers are not events, so they cannot be edges of
 * the graph. They are fixed per path instead: a configuration is one answer per question (a
 * "dimension"). Configurations are enumerated lazily: starting from the defaults, only dimensions
 * the machine actually consulted while its graph was explored are varied, and configurations that
 * differ only in unconsulted dimensions are one class (their graphs are identical).
 */
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { modelLogic, type ModelOptions } from './modelScope.js';

/** Possible answers per dimension; the first one is the default. */
export type Dimensions<C> = { readonly [K in keyof C]: readonly C[K][] };

export interface ConfigClass<C> {
  /** A representative configuration. */
  readonly config: C;
  /** The dimensions the machine consulted under it (the rest do not matter). */
  readonly consulted: ReadonlyArray<keyof C>;
  /** `pre=pending guard=deny …`: the consulted dimensions with their values. */
  readonly label: string;
}

export function configLabel<C>(config: C, consulted: ReadonlyArray<keyof C>): string {
  return consulted.map((k) => `${String(k)}=${String(config[k])}`).join(' ') || '(default)';
}

/**
 * Enumerates the configuration classes: `explore(config)` must build the machine's graph under a
 * configuration whose reads are tracked.
 */
export function enumerateConfigs<C extends object>(dims: Dimensions<C>, explore: (config: C) => void): ConfigClass<C>[] {
  const keys = Object.keys(dims) as Array<keyof C>;
  const defaults = Object.fromEntries(keys.map((k) => [k, dims[k][0]])) as C;
  const seen = new Set<string>();
  const classes = new Map<string, ConfigClass<C>>();
  const work: C[] = [defaults];
  while (work.length) {
    const config = work.shift()!;
    const id = JSON.stringify(keys.map((k) => config[k]));
    if (seen.has(id)) continue;
    seen.add(id);
    const read = new Set<keyof C>();
    const tracked = new Proxy(config, {
      get(target, key) {
        read.add(key as keyof C);
        return target[key as keyof C];
      },
    });
    explore(tracked);
    const consulted = keys.filter((k) => read.has(k));
    const classKey = JSON.stringify(consulted.map((k) => [k, config[k]]));
    if (!classes.has(classKey)) classes.set(classKey, { config, consulted, label: configLabel(config, consulted) });
    // Vary only what was consulted; everything else goes back to its default.
    const base = { ...defaults, ...Object.fromEntries(consulted.map((k) => [k, config[k]])) } as C;
    for (const k of consulted) for (const v of dims[k]) work.push({ ...base, [k]: v });
  }
  return [...classes.values()];
}

export interface PlannedPath<C> {
  /** Unique in the suite: `[config label] event > event > …`. */
  readonly name: string;
  readonly config: C;
  readonly configLabel: string;
  /** The events of the path after the initial state (no `xstate.init`). */
  readonly events: readonly AnyEventObject[];
  /** Which generator produced it (a path found by both is listed once with both). */
  readonly sources: ReadonlyArray<'shortest' | 'simple'>;
  /** The serialized end state. */
  readonly end: string;
}

export interface GraphModel<C> {
  readonly machine: AnyStateMachine;
  input(config: C): unknown;
  /** The events to try in a state, with payloads. */
  events(snapshot: AnyMachineSnapshot, config: C): readonly AnyEventObject[];
  /** The state by value plus the few context bits that decide what can happen next. */
  serialize(snapshot: AnyMachineSnapshot): string;
  /** A short label of an event for path names. */
  describe(event: AnyEventObject): string;
  readonly options?: ModelOptions;
}

export interface PlanOptions<C> {
  /** Which classes also get every simple path (all get shortest paths). Default: all. */
  readonly simplePathsFor?: (c: ConfigClass<C>) => boolean;
  /**
   * Events the simple-path walk may use (default: all). Simple paths are every loop-free route;
   * events that only toggle a detail (a text buffer's kind) multiply them without adding a branch.
   */
  readonly simpleEvents?: (event: AnyEventObject) => boolean;
  /** Keep every completed shortest path, not just enough of them to visit every state (default false). */
  readonly everyShortestPath?: boolean;
  /** Also a path through every edge (state, event) no state-covering path takes (default true). */
  readonly everyEdge?: boolean;
  /** Which end states count (default: final states, status `done`). */
  readonly isEnd?: (snapshot: AnyMachineSnapshot) => boolean;
}

function traversal<C>(model: GraphModel<C>, config: C, keep: (e: AnyEventObject) => boolean = () => true) {
  return {
    events: (s: AnyMachineSnapshot) => model.events(s, config).filter(keep) as AnyEventObject[],
    serializeState: (s: AnyMachineSnapshot) => model.serialize(s),
    serializeEvent: (e: AnyEventObject) => JSON.stringify(e),
  } as never;
}

/** Builds the graph once under `config` (used to discover which dimensions it consults). */
export function exploreGraph<C>(model: GraphModel<C>, config: C): number {
  return Object.keys(getAdjacencyMap(modelLogic(model.machine, model.input(config), model.options), traversal(model, config))).length;
}

export interface Plan<C> {
  readonly paths: readonly PlannedPath<C>[];
  /** Reachable states (with their class) from which no end state can be reached: a stuck machine. */
  readonly deadEnds: readonly string[];
}

type Adjacency = Record<string, { state: AnyMachineSnapshot; transitions: Record<string, { event: AnyEventObject; state: AnyMachineSnapshot }> }>;

/** For every state, the first step of a shortest route to an end state (reverse breadth-first search). */
function routesToEnd(adj: Adjacency, serialize: (s: AnyMachineSnapshot) => string, isEnd: (s: AnyMachineSnapshot) => boolean) {
  const reverse = new Map<string, Array<{ from: string; event: AnyEventObject }>>();
  for (const [from, v] of Object.entries(adj)) {
    for (const t of Object.values(v.transitions)) {
      const to = serialize(t.state);
      if (to === from) continue;
      if (!reverse.has(to)) reverse.set(to, []);
      reverse.get(to)!.push({ from, event: t.event });
    }
  }
  const next = new Map<string, { event: AnyEventObject; to: string } | null>();
  const queue: string[] = [];
  for (const [key, v] of Object.entries(adj)) {
    if (isEnd(v.state)) {
      next.set(key, null);
      queue.push(key);
    }
  }
  while (queue.length) {
    const to = queue.shift()!;
    for (const { from, event } of reverse.get(to) ?? []) {
      if (next.has(from)) continue;
      next.set(from, { event, to });
      queue.push(from);
    }
  }
  return next;
}

/**
 * Paths that end in an end state: for every class, the shortest path to every state of its graph
 * (one that stops short of an end state is completed by the shortest route from there to an end;
 * of these, enough to visit every state, longest first), and, for the classes `simplePathsFor`
 * selects, every simple path to an end state.
 */
export function planPaths<C>(model: GraphModel<C>, classes: readonly ConfigClass<C>[], options: PlanOptions<C> = {}): Plan<C> {
  const isEnd = options.isEnd ?? ((s: AnyMachineSnapshot) => s.status === 'done');
  const out = new Map<string, { path: PlannedPath<C>; sources: Set<'shortest' | 'simple'> }>();
  const deadEnds: string[] = [];
  const add = (c: ConfigClass<C>, source: 'shortest' | 'simple', events: AnyEventObject[], end: string) => {
    const name = `[${c.label}] ${events.map((e) => model.describe(e)).join(' > ') || '(no events)'}`;
    const entry = out.get(name);
    if (entry) entry.sources.add(source);
    else out.set(name, { path: { name, config: c.config, configLabel: c.label, events, sources: [], end }, sources: new Set([source]) });
  };
  for (const c of classes) {
    const logic = () => modelLogic(model.machine, model.input(c.config), model.options);
    const adj = getAdjacencyMap(logic(), traversal(model, c.config)) as unknown as Adjacency;
    const toEnd = routesToEnd(adj, model.serialize, isEnd);
    for (const key of Object.keys(adj)) if (!toEnd.has(key)) deadEnds.push(`[${c.label}] ${key}`);
    // Shortest path to every state, completed to an end state; then, longest first, only those that
    // visit a state no kept path visits (a long path covers the states on its way).
    const candidates: Array<{ events: AnyEventObject[]; visits: string[]; end: string }> = [];
    for (const p of getShortestPaths(logic(), traversal(model, c.config))) {
      const events = p.steps.map((s) => s.event as AnyEventObject).filter((e) => e.type !== 'xstate.init');
      const visits = p.steps.map((s) => model.serialize(s.state as AnyMachineSnapshot));
      let end = model.serialize(p.state as AnyMachineSnapshot);
      if (!toEnd.has(end)) continue;
      for (let hop = toEnd.get(end); hop; hop = toEnd.get(end)) {
        events.push(hop.event);
        end = hop.to;
        visits.push(end);
      }
      candidates.push({ events, visits, end });
    }
    candidates.sort((a, b) => b.events.length - a.events.length || a.visits.join().localeCompare(b.visits.join()));
    const visited = new Set<string>();
    const taken = new Set<string>();
    const edgeKey = (from: string, event: AnyEventObject) => `${from}|${JSON.stringify(event)}`;
    const markEdges = (visits: readonly string[], events: readonly AnyEventObject[]) => {
      // visits[0] is the initial state (the `xstate.init` step); visits[i + 1] follows events[i].
      events.forEach((e, i) => taken.add(edgeKey(visits[i]!, e)));
    };
    for (const cand of candidates) {
      if (options.everyShortestPath !== true && cand.visits.every((v) => visited.has(v))) continue;
      cand.visits.forEach((v) => visited.add(v));
      markEdges(cand.visits, cand.events);
      add(c, 'shortest', cand.events, cand.end);
    }
    // Every edge of the graph (a state and an event offered there) that no kept path takes: the
    // shortest path to its source, the edge, then the shortest route to an end. Visiting every
    // state is not enough: two events from one state may lead to the same state by different
    // transitions (a body that succeeds before or after a cancel both end `settled:ok`).
    const shortestTo = new Map<string, { events: AnyEventObject[]; visits: string[] }>();
    for (const p of getShortestPaths(logic(), traversal(model, c.config))) {
      const steps = p.steps;
      shortestTo.set(model.serialize(p.state as AnyMachineSnapshot), {
        events: steps.map((s) => s.event as AnyEventObject).filter((e) => e.type !== 'xstate.init'),
        visits: steps.map((s) => model.serialize(s.state as AnyMachineSnapshot)),
      });
    }
    if (options.everyEdge !== false) {
      for (const [from, v] of Object.entries(adj)) {
        const head = shortestTo.get(from);
        if (!head) continue;
        for (const t of Object.values(v.transitions)) {
          let end = model.serialize(t.state);
          if (taken.has(edgeKey(from, t.event)) || !toEnd.has(end)) continue;
          const events = [...head.events, t.event];
          const visits = [...head.visits, end];
          for (let hop = toEnd.get(end); hop; hop = toEnd.get(end)) {
            events.push(hop.event);
            end = hop.to;
            visits.push(end);
          }
          markEdges(visits, events);
          add(c, 'shortest', events, end);
        }
      }
    }
    if (options.simplePathsFor?.(c) ?? true) {
      for (const p of getSimplePaths(logic(), traversal(model, c.config, options.simpleEvents))) {
        if (!isEnd(p.state as AnyMachineSnapshot)) continue;
        const events = p.steps.map((s) => s.event as AnyEventObject).filter((e) => e.type !== 'xstate.init');
        add(c, 'simple', events, model.serialize(p.state as AnyMachineSnapshot));
      }
    }
  }
  return { paths: [...out.values()].map(({ path, sources }) => ({ ...path, sources: [...sources].sort() })), deadEnds };
}
