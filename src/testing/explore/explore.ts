/**
 * `explore`: the user's agent through every path its configuration allows, each run judged by
 * dsh's SPEC (`specOracle.ts`) and the user's invariants; a failure shrunk to the fewest
 * deviations that still fail, printed as steps, written as a session log `dsh inspect` opens, and
 * replayable from its path. See docs/testing.md, "Testing your agent".
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEvent } from '../../protocol/index.js';
import { Recorder } from '../paths/observe.js';
import { AgentCoverageCollector, formatReach, type AgentCoverage } from './agentCoverage.js';
import { Chooser, childrenOf, deviationsOf, seededRandom, trimmed } from './choices.js';
import { writeCounterexample } from './counterexampleLog.js';
import { exploreRun, type RunRecord, type RunSettings } from './exploredRun.js';
import { judgeBySpec, SPEC_RULES } from './specOracle.js';
import type { ExploredRun, ExploredTurn, Invariant, RuntimeFactory } from './world.js';

/** Which kinds of choice a run may deviate at (each on by default). */
export interface ExploredChoices {
  /** Every approval answer: once, always, denied, timed out, suspended (and resumed by a new process). */
  approvals?: boolean;
  /** Every body's ending: as it runs, throwing, answering after its deadline, cancelled while it runs; and their order. */
  bodies?: boolean;
  /** A cancel of the turn wherever it waits. */
  cancels?: boolean;
  /** A crash at every log append, then a resume from what was durable. */
  crashes?: boolean;
  /** Each pre-execute and post-execute listener and each guard throwing where it runs (the call fails closed, HOOK_FAILED). */
  listeners?: boolean;
}

export interface ExploreOptions {
  /** Builds the agent: called for every process of every run, with the world to build it on (`createRuntime({ ...world, tools })`). */
  runtime: RuntimeFactory;
  /**
   * The turn every run starts. A `scriptedModel` is restarted for each process; another model must
   * be stateless, or give a function that makes fresh options.
   */
  turn: ExploredTurn;
  /** The user's invariants, by name: true (or nothing) when a run is fine, false or a message when not. */
  invariants?: Readonly<Record<string, Invariant>>;
  /** Seeds the paths sampled past `maxDeviations` (default 1): the same seed, the same runs. */
  seed?: number;
  /** Most runs (default 1,000); shrinking a failure adds its own runs on top. */
  maxRuns?: number;
  /** Every path with at most this many deviations from the ordinary one is run (default 3); deeper paths are sampled. */
  maxDeviations?: number;
  /** Which choices vary (all by default). */
  choices?: ExploredChoices;
  /** The message of the turn a new process starts after a crash (default `continue`); false: it starts none. */
  resumeInput?: string | false;
  /** Processes one run may take (default 3). */
  maxProcesses?: number;
  /** Choice points one run may take before it is cut (default 200). */
  maxChoices?: number;
  /** Real milliseconds a body or listener may work without settling or waiting on the clock (default 10,000). */
  patienceMs?: number;
  /** SPEC rules to check (default: every rule of `SPEC_RULES`). */
  spec?: ReadonlyArray<keyof typeof SPEC_RULES>;
  /** Runs this path only (a failure's `path`). */
  replay?: readonly number[];
  /** Where counterexample logs go (default: a new directory under the OS temp dir); false: none is written. */
  failureLogs?: string | false;
  /** Most runs spent shrinking each failure (default 200). */
  shrinkRuns?: number;
}

/** One way the agent fails: the shortest path found, shrunk. */
export interface ExploreFailure {
  /** The user's invariant, or the SPEC rule, that the run broke. */
  readonly invariant: string;
  readonly message: string;
  /** The run, as steps a person reads. */
  readonly steps: readonly string[];
  /** The choices of the run: `explore({ ...options, replay: path })` runs it again. */
  readonly path: readonly number[];
  readonly seed: number;
  /** The session's events. */
  readonly log: readonly LogEvent[];
  /** The session as a JSONL file `dsh inspect` opens. */
  readonly logFile?: string;
  readonly run: ExploredRun;
}

export interface ExploreReport {
  /** No run failed. */
  readonly ok: boolean;
  /** Runs made (shrinking not counted). */
  readonly runs: number;
  /** Of them, paths drawn at random from the seed past `maxDeviations`. */
  readonly sampled: number;
  /** Every path with up to `maxDeviations` deviations was run. */
  readonly exhaustive: boolean;
  /** Paths found and not run because the run budget ended, plus runs cut at `maxChoices`. */
  readonly cut: number;
  readonly seed: number;
  /** Wall-clock milliseconds the exploration took (shrinking included). */
  readonly durationMs: number;
  /** One per invariant or rule broken: the run with the fewest deviations found, shrunk. */
  readonly failures: readonly ExploreFailure[];
  readonly coverage: AgentCoverage;
}

/** Draws in a row that found only paths already run, after which sampling stops. */
const MAX_SAMPLE_MISSES = 50;

/** A verdict on one run: each invariant or rule it broke, with the message. */
function judge(run: RunRecord, options: ExploreOptions): Array<{ invariant: string; message: string }> {
  const rules = new Set((options.spec ?? Object.keys(SPEC_RULES)).map((k) => SPEC_RULES[k as keyof typeof SPEC_RULES]));
  const out = judgeBySpec(run)
    .filter((v) => rules.has(v.rule as (typeof SPEC_RULES)[keyof typeof SPEC_RULES]))
    .map((v) => ({ invariant: v.rule, message: v.message }));
  for (const [name, check] of Object.entries(options.invariants ?? {})) {
    let verdict: boolean | string | void;
    try {
      verdict = check(run);
    } catch (e) {
      verdict = `it threw: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (verdict === false) out.push({ invariant: name, message: 'the invariant does not hold' });
    else if (typeof verdict === 'string') out.push({ invariant: name, message: verdict });
  }
  return out;
}

/**
 * Runs the agent through every path its configuration allows (see `ExploreOptions`) and judges each.
 *
 * @example
 * ```ts
 * const report = await explore({
 *   runtime: (world) => createRuntime({ ...world, tools: [charge] }),
 *   turn: { input: 'pay', model: scriptedModel([{ toolCalls: [{ toolName: 'charge', input: { order: 7 } }] }, { text: 'paid' }]) },
 *   invariants: { 'charges once': (run) => charges.count(run) <= 1 || 'charged twice' },
 * });
 * if (!report.ok) console.log(formatReport(report));
 * ```
 */
export async function explore(options: ExploreOptions): Promise<ExploreReport> {
  const started = performance.now();
  const seed = options.seed ?? 1;
  const maxRuns = options.maxRuns ?? 1_000;
  const maxDeviations = options.maxDeviations ?? 3;
  const choices = options.choices ?? {};
  const settings: RunSettings = {
    runtime: options.runtime,
    turn: options.turn,
    resumeInput: options.resumeInput ?? 'continue',
    approvals: choices.approvals ?? true,
    bodies: choices.bodies ?? true,
    cancels: choices.cancels ?? true,
    crashes: choices.crashes ?? true,
    listeners: choices.listeners ?? true,
    maxProcesses: options.maxProcesses ?? 3,
    maxChoices: options.maxChoices ?? 200,
    patienceMs: options.patienceMs ?? 10_000,
  };
  let coverage: AgentCoverageCollector | undefined;
  let made = 0;
  const run = async (chooser: Chooser): Promise<RunRecord> => {
    const recorder = new Recorder();
    const index = ++made;
    const record = await exploreRun(settings, chooser, recorder, (tools) => (coverage ??= new AgentCoverageCollector(tools)), index);
    coverage!.record(`#${index}`, recorder, record.decisions);
    return record;
  };

  const found = new Map<string, { message: string; record: RunRecord }>();
  const note = (record: RunRecord) => {
    for (const v of judge(record, options)) if (!found.has(v.invariant)) found.set(v.invariant, { message: v.message, record });
  };
  let runs = 0;
  let sampled = 0;
  let cutRuns = 0;
  let queue: number[][] = [options.replay ? [...options.replay] : []];
  const seen = new Set<string>();
  // Whether some path goes on past the bound (else every path there is was run, and none is left to sample).
  let deeper = false;
  while (queue.length > 0 && runs < maxRuns) {
    const path = queue.shift()!;
    const record = await run(new Chooser(path));
    runs++;
    if (record.cut) cutRuns++;
    note(record);
    if (options.replay) break;
    const key = trimmed(record.path).join(',');
    seen.add(key);
    const children = childrenOf(record.made);
    if (deviationsOf(record.path) < maxDeviations) queue.push(...children);
    else if (children.length > 0) deeper = true;
  }
  const exhaustive = queue.length === 0 && !options.replay;
  const cut = (options.replay ? 0 : queue.length) + cutRuns;
  queue = [];
  if (exhaustive && deeper) {
    // Past the bound: paths drawn from the seed, each run once (given up after many draws in a row find no new one).
    const random = seededRandom(seed);
    for (let misses = 0; runs < maxRuns && misses < MAX_SAMPLE_MISSES; ) {
      const record = await run(new Chooser([], random));
      const key = trimmed(record.path).join(',');
      if (seen.has(key)) {
        misses++;
        continue;
      }
      misses = 0;
      seen.add(key);
      runs++;
      sampled++;
      note(record);
    }
  }

  const failures: ExploreFailure[] = [];
  let dir: string | undefined;
  for (const [invariant, first] of found) {
    const shrunk = await shrink(first.record, options.shrinkRuns ?? 200, async (path) => {
      const record = await run(new Chooser(path));
      const broken = judge(record, options).find((v) => v.invariant === invariant);
      return broken ? { record, message: broken.message } : undefined;
    });
    const message = shrunk?.message ?? first.message;
    const record = shrunk?.record ?? first.record;
    let logFile: string | undefined;
    if (options.failureLogs !== false) {
      if (dir === undefined) {
        dir = options.failureLogs ?? (await mkdtemp(join(tmpdir(), 'dsh-explore-')));
        await mkdir(dir, { recursive: true });
      }
      logFile = await writeCounterexample(dir, invariant, failures.length + 1, record.events);
    }
    failures.push({ invariant, message, steps: record.steps, path: trimmed(record.path), seed, log: record.events, ...(logFile ? { logFile } : {}), run: record });
  }
  return {
    ok: failures.length === 0,
    runs,
    sampled,
    exhaustive,
    cut,
    seed,
    durationMs: performance.now() - started,
    failures,
    coverage: coverage?.report() ?? { machines: [], tools: {}, unreached: [] },
  };
}

/**
 * The failing run with as few deviations as still fail the same way: each deviation, last first,
 * is tried as the ordinary choice instead, and kept out when the run still fails.
 */
async function shrink(
  record: RunRecord,
  budget: number,
  fails: (path: readonly number[]) => Promise<{ record: RunRecord; message: string } | undefined>,
): Promise<{ record: RunRecord; message: string } | undefined> {
  let best: { record: RunRecord; message: string } | undefined;
  let path = trimmed(record.path);
  for (let i = path.length - 1; i >= 0 && budget > 0; i--) {
    if (path[i] === 0) continue;
    const tried = [...path];
    tried[i] = 0;
    budget--;
    const result = await fails(trimmed(tried));
    if (result) {
      best = result;
      path = trimmed(result.record.path);
      i = Math.min(i, path.length);
    }
  }
  return best;
}

/** A report as a person reads it: counts, each failure's steps and log, the coverage, what no run reached. */
export function formatReport(report: ExploreReport): string {
  const lines = [
    `explored ${report.runs} runs (${report.exhaustive ? 'every path within the bound' : 'the bound was not exhausted'}${report.sampled ? `, ${report.sampled} sampled past it` : ''}; ${report.cut} cut) in ${(report.durationMs / 1000).toFixed(1)} s, seed ${report.seed}`,
  ];
  lines.push(report.ok ? 'no failure' : `${report.failures.length} failure(s):`);
  for (const f of report.failures) {
    lines.push(`✗ ${f.invariant}: ${f.message}`);
    f.steps.forEach((s, i) => lines.push(`  ${i + 1}. ${s}`));
    if (f.logFile) lines.push(`  log: ${f.logFile} (dsh inspect ${f.logFile})`);
    lines.push(`  replay: explore({ ...options, replay: ${JSON.stringify(f.path)} })`);
  }
  lines.push('coverage:', ...formatReach(report.coverage.machines).split('\n').filter(Boolean).map((l) => `  ${l}`));
  if (report.coverage.unreached.length > 0) lines.push('never reached:', ...report.coverage.unreached.map((s) => `  ${s}`));
  return lines.join('\n');
}
