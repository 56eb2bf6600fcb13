/**
 * What an exploration of one agent reached: per machine, the states and transitions its runs were
 * seen in (from XState inspection, `../paths/coverage.ts`), and per tool, in plain sentences, what
 * no run of this configuration could make happen ("`write` is never asked about").
 */
import { machineRegistry } from '../../../machines/registry.js';
import { CoverageMap } from '../paths/coverage.js';
import type { Recorder } from '../paths/observe.js';
import type { CallDecisions } from './exploredRun.js';

/** One machine's coverage: what was reached and what was not, by name. */
export interface MachineReach {
  readonly name: string;
  readonly states: { readonly reached: number; readonly total: number; readonly missed: readonly string[] };
  readonly transitions: { readonly reached: number; readonly total: number; readonly missed: readonly string[] };
}

/** What happened to one tool's calls over all runs. */
export interface ToolReach {
  readonly called: boolean;
  readonly asked: boolean;
  readonly deniedByListener: boolean;
  readonly deniedByGuard: boolean;
  readonly ran: boolean;
  readonly blockedAfter: boolean;
}

/** What an exploration reached: each machine's states and transitions, and each tool's outcomes. */
export interface AgentCoverage {
  /** Machines the agent's runs used (a machine no run started, e.g. the JSONL sink's group commit, is left out). */
  readonly machines: readonly MachineReach[];
  readonly tools: Readonly<Record<string, ToolReach>>;
  /** What no run reached, as sentences (`` `write` is never asked about ``). */
  readonly unreached: readonly string[];
}

/** Collects the coverage of the runs of one exploration. */
export class AgentCoverageCollector {
  private readonly map = new CoverageMap(machineRegistry);
  private readonly used = new Set<string>();
  private readonly tools = new Map<string, { -readonly [K in keyof ToolReach]: boolean }>();

  constructor(toolNames: readonly string[]) {
    for (const name of toolNames) this.tools.set(name, { called: false, asked: false, deniedByListener: false, deniedByGuard: false, ran: false, blockedAfter: false });
  }

  record(run: string, recorder: Recorder, decisions: readonly CallDecisions[]): void {
    this.map.record(run, recorder);
    for (const [name, machine] of Object.entries(machineRegistry)) if (recorder.of(machine).length > 0) this.used.add(name);
    for (const d of decisions) {
      const t = this.tools.get(d.toolName);
      if (!t) continue;
      t.called = true;
      for (const o of d.outcomes) {
        if (o.stage === 'awaitingApproval') t.asked = true;
        else if (o.stage === 'preExecute' && o.kind === 'deny') t.deniedByListener = true;
        else if (o.stage === 'guard' && o.kind === 'deny') t.deniedByGuard = true;
        else if (o.stage === 'executing') t.ran = true;
        else if (o.stage === 'postExecute' && o.kind === 'blocked') t.blockedAfter = true;
      }
    }
  }

  report(): AgentCoverage {
    const machines = this.map
      .report()
      .filter((m) => this.used.has(m.name))
      .map((m) => ({
        name: m.name,
        states: { reached: m.states.filter((s) => s.paths.length > 0).length, total: m.states.length, missed: m.states.filter((s) => s.paths.length === 0).map((s) => s.label) },
        transitions: {
          reached: m.transitions.filter((t) => t.paths.length > 0).length,
          total: m.transitions.length,
          missed: m.transitions.filter((t) => t.paths.length === 0).map((t) => t.label),
        },
      }));
    const unreached: string[] = [];
    for (const [name, t] of this.tools) {
      if (!t.called) {
        unreached.push(`\`${name}\` is never called (no run's model asks for it)`);
        continue;
      }
      if (!t.asked) unreached.push(`\`${name}\` is never asked about`);
      if (!t.deniedByListener) unreached.push(`no listener can deny \`${name}\``);
      if (!t.deniedByGuard) unreached.push(`no guard denies \`${name}\``);
      if (!t.ran) unreached.push(`\`${name}\` never runs (every call is stopped before its body)`);
    }
    return { machines, tools: Object.fromEntries(this.tools), unreached };
  }
}

/** `toolCall: 12/14 states, 30/36 transitions`, one line per machine. */
export function formatReach(machines: readonly MachineReach[]): string {
  return machines.map((m) => `${m.name}: ${m.states.reached}/${m.states.total} states, ${m.transitions.reached}/${m.transitions.total} transitions`).join('\n');
}
