/**
 * Coverage of machines by observed runs: every state node and every transition of every machine
 * (see `catalog.ts`), each mapped to the names of the runs in which the real runtime was seen to
 * be in that state or to take that transition (from inspection events, see `observe.ts`).
 */
import type { AnyStateMachine } from 'xstate';
import { catalogOf, type MachineCatalog } from './catalog.js';
import type { Recorder } from './observe.js';

export interface CoverageItem {
  readonly key: string;
  readonly label: string;
  /** Names of the runs that reached it. */
  readonly paths: readonly string[];
}

export interface MachineCoverage {
  /** The registry name (`toolCall`). */
  readonly name: string;
  readonly states: readonly CoverageItem[];
  readonly transitions: readonly CoverageItem[];
}

export class CoverageMap {
  private readonly catalogs: Array<{ name: string; catalog: MachineCatalog; states: Map<string, Set<string>>; transitions: Map<string, Set<string>> }>;

  constructor(machines: Readonly<Record<string, AnyStateMachine>>) {
    this.catalogs = Object.entries(machines).map(([name, machine]) => {
      const catalog = catalogOf(machine);
      return {
        name,
        catalog,
        states: new Map(catalog.states.map((s) => [s.key, new Set<string>()])),
        transitions: new Map(catalog.transitions.map((t) => [t.key, new Set<string>()])),
      };
    });
  }

  /** Adds what `recorder` saw during the run called `run`. */
  record(run: string, recorder: Recorder): void {
    for (const c of this.catalogs) {
      for (const actor of recorder.of(c.catalog.machine)) {
        const markState = (id: string) => c.states.get(id)?.add(run);
        actor.snapshotNodes.forEach(markState);
        for (const m of actor.microsteps) {
          for (const n of m.snapshot._nodes) markState(n.id);
          for (const t of m.transitions) {
            // A transition is taken from an active state: its source was reached, even if it was
            // the initial state of a macrostep whose first microstep inspection does not report.
            markState(t.source.id);
            for (const target of t.target ?? []) if (target.type === 'history') markState(target.id);
            const key = c.catalog.transitionKeyOf(t);
            if (key) c.transitions.get(key)?.add(run);
          }
        }
      }
    }
  }

  report(): MachineCoverage[] {
    return this.catalogs.map((c) => ({
      name: c.name,
      states: c.catalog.states.map((s) => ({ key: s.key, label: s.key, paths: [...c.states.get(s.key)!] })),
      transitions: c.catalog.transitions.map((t) => ({ key: t.key, label: t.label, paths: [...c.transitions.get(t.key)!] })),
    }));
  }
}

const count = (items: readonly CoverageItem[]) => `${items.filter((i) => i.paths.length > 0).length}/${items.length}`;

/** `toolCall: 14/14 states, 33/33 transitions`, one line per machine. */
export function formatCounts(report: readonly MachineCoverage[]): string {
  return report.map((m) => `${m.name}: ${count(m.states)} states, ${count(m.transitions)} transitions`).join('\n');
}

/** One line per state or transition no run reached, naming the machine. */
export function uncovered(report: readonly MachineCoverage[]): string[] {
  return report.flatMap((m) => [
    ...m.states.filter((s) => s.paths.length === 0).map((s) => `${m.name}: state ${s.label} is not reached by any path`),
    ...m.transitions.filter((t) => t.paths.length === 0).map((t) => `${m.name}: transition ${t.label} is not taken by any path`),
  ]);
}
