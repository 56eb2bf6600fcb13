/**
 * Every state node and every transition of a machine, read from the machine object itself
 * (`machine.root` and its `StateNode`s), never from a hand-kept list: a stage added to a machine
 * shows up here, and so in the coverage test, without anyone touching this file.
 *
 * A transition is one *candidate* of one trigger of one state: `PRE.DECIDED [preDenied]` and
 * `PRE.DECIDED [preAsk]` are two transitions. Triggers are events, `always` (eventless), `after`
 * (delays), done/error events of invoked or spawned children (including wildcards such as
 * `xstate.done.actor.*`) and `onDone` of compound states.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

export type TriggerKind = 'event' | 'always' | 'after' | 'child-done' | 'child-error' | 'state-done' | 'child-snapshot';

export interface StateEntry {
  /** The state node's id, e.g. `toolCall.preExecute.waitingForListener`. */
  readonly key: string;
  readonly node: AnyStateNode;
}

export interface TransitionEntry {
  /** Unique within the machine: `<source id>|<event type>|<candidate index>`. */
  readonly key: string;
  /** How a person reads it: `preExecute: PRE.DECIDED [preDenied] → finalizing`. */
  readonly label: string;
  readonly source: string;
  readonly kind: TriggerKind;
  /** `PRE.DECIDED`, `always`, `after hookTimeout`, `done call-*`, … */
  readonly trigger: string;
  readonly eventType: string;
  readonly guard: string | undefined;
  /** Target state ids; empty for a targetless transition (actions only). */
  readonly targets: readonly string[];
  readonly definition: AnyTransitionDefinition;
}

export interface MachineCatalog {
  readonly machine: AnyStateMachine;
  readonly states: readonly StateEntry[];
  readonly transitions: readonly TransitionEntry[];
  /** Looks a transition definition up (by identity, else by source, event type and position). */
  transitionKeyOf(definition: AnyTransitionDefinition): string | undefined;
}

export function kindOf(eventType: string): TriggerKind {
  if (eventType === '') return 'always';
  if (eventType.startsWith('xstate.after.')) return 'after';
  if (eventType.startsWith('xstate.done.actor.')) return 'child-done';
  if (eventType.startsWith('xstate.error.actor.')) return 'child-error';
  if (eventType.startsWith('xstate.snapshot.')) return 'child-snapshot';
  if (eventType.startsWith('xstate.done.state.')) return 'state-done';
  return 'event';
}

/** An invoked child by its source (`load`) rather than its generated id (`0.adHoc.loading`). */
function childName(source: AnyStateNode, id: string): string {
  const invoked = source.invoke.find((i) => i.id === id);
  return invoked && typeof invoked.src === 'string' ? invoked.src : id;
}

function triggerOf(eventType: string, source: AnyStateNode): string {
  switch (kindOf(eventType)) {
    case 'always':
      return 'always';
    case 'after': {
      // `xstate.after.<delay>.<source id>`
      const rest = eventType.slice('xstate.after.'.length);
      return `after ${rest.endsWith(`.${source.id}`) ? rest.slice(0, -(source.id.length + 1)) : rest}`;
    }
    case 'child-done':
      return `done ${childName(source, eventType.slice('xstate.done.actor.'.length))}`;
    case 'child-error':
      return `error ${childName(source, eventType.slice('xstate.error.actor.'.length))}`;
    case 'state-done':
      return 'onDone';
    default:
      return eventType;
  }
}

/** A readable name for a guard: its name, `and(a, b)`, `not(a)`, or `inline` for an anonymous function. */
export function guardLabel(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const parts = (guard as { guards?: unknown[] }).guards;
    const name = (guard as { name?: string }).name;
    if (Array.isArray(parts) && name) return `${name}(${parts.map((g) => guardLabel(g) ?? '?').join(', ')})`;
    return name && name !== 'guard' ? name : 'inline';
  }
  if (typeof guard === 'object' && guard !== null && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'inline';
}

function stateName(machine: AnyStateMachine, id: string): string {
  return id.startsWith(`${machine.id}.`) ? id.slice(machine.id.length + 1) : id;
}

/** Candidate lists of a node: each `on`/`after`/done trigger, then `always`. */
function candidateLists(node: AnyStateNode): Array<[string, readonly AnyTransitionDefinition[]]> {
  const lists: Array<[string, readonly AnyTransitionDefinition[]]> = [...node.transitions.entries()];
  if (node.always?.length) lists.push(['', node.always]);
  return lists;
}

function allNodes(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...allNodes(child)]);
}

/** Reads the states and transitions of `machine`. */
export function catalogOf(machine: AnyStateMachine): MachineCatalog {
  const states = allNodes(machine.root).map((node) => ({ key: node.id, node }));
  const transitions: TransitionEntry[] = [];
  const byDefinition = new Map<AnyTransitionDefinition, string>();
  for (const node of [machine.root, ...states.map((s) => s.node)]) {
    for (const [eventType, candidates] of candidateLists(node)) {
      const anyGuarded = candidates.some((c) => c.guard !== undefined);
      candidates.forEach((definition, index) => {
        const key = `${node.id}|${eventType}|${index}`;
        const guard = guardLabel(definition.guard);
        const targets = (definition.target ?? []).map((t) => t.id);
        const trigger = triggerOf(eventType, node);
        const shownGuard = guard ?? (anyGuarded ? 'else' : undefined);
        const to = targets.length ? targets.map((t) => stateName(machine, t)).join(', ') : '(stays)';
        const label = `${stateName(machine, node.id) || '(root)'}: ${trigger}${shownGuard ? ` [${shownGuard}]` : ''} → ${to}`;
        transitions.push({ key, label, source: node.id, kind: kindOf(eventType), trigger, eventType, guard, targets, definition });
        byDefinition.set(definition, key);
      });
    }
  }
  return {
    machine,
    states,
    transitions,
    transitionKeyOf(definition) {
      const known = byDefinition.get(definition);
      if (known) return known;
      // A copy of the machine (e.g. `machine.provide(...)`) has new definition objects: match by position.
      const source = definition.source;
      const list = definition.eventType === '' ? source.always ?? [] : source.transitions.get(definition.eventType) ?? [];
      const index = list.indexOf(definition);
      const key = `${source.id}|${definition.eventType}|${index}`;
      return index >= 0 && transitions.some((t) => t.key === key) ? key : undefined;
    },
  };
}
