/** The results file's shape (issue 4) and the markdown table printed from it. */
import type { W1Detail, W1Result } from '../workloads/w1.js';
import type { JsonlTiming, W2Breakdown, W2Result, W3Result, W5Result } from '../workloads/timing.js';
import type { W4Detail, W4Result } from '../workloads/w4.js';
import type { W6Detail, W6Result } from '../workloads/w6.js';
import { storeRows, type StoreDetail, type StoreResult } from '../workloads/store.js';
import { COLD_RUN_TARGET_MS, type ColdStartDetail, type ColdStartResult } from '../workloads/coldStart.js';
import { BUNDLE_BUDGET_BYTES, REACT_BUNDLE_BUDGET_BYTES, type BundleResult } from '../workloads/bundle.js';
import type { W8Detail, W8Result } from '../workloads/w8.js';
import type { BashStartResult } from '../workloads/bashStart.js';
import { VIEW_SCALE_TARGET, type ViewScaleResult } from '../workloads/viewScale.js';
import type { ExploreBenchResult } from '../workloads/explore.js';
import type { WireResult } from '../workloads/wire.js';
import { AREA_LABELS, AREAS, type ProfiledSide, type WhereTimeGoesResult } from '../workloads/whereTimeGoes.js';

export interface Results {
  node: string;
  date: string;
  quick: boolean;
  w1: W1Result | null;
  w2: W2Result | null;
  w3: W3Result | null;
  w4: W4Result | null;
  w5: W5Result | null;
  w6: W6Result | null;
  /** `null` values: not measured (never a made-up number). */
  w7: { spillMiB: number; peakRssOverInput: number | null; ms: number | null; logBytesPerSpill?: number | null; pageReadMs?: number | null };
  /** Cold start of the built `dsh --version` and `dsh run` to its first model request (absent in results from before it was measured). */
  coldStart?: ColdStartResult | null;
  /** The `dsh` entry's browser bundle (absent in results from before it was measured). */
  bundle?: BundleResult | null;
  /** Flat per-step cost and resume time (issue 16.1; absent in results from before it was measured). */
  w8?: W8Result | null;
  /** Session store: append latency Postgres vs JSONL, turns/s with 1 and 2 workers (issue 16). */
  store?: StoreResult | null;
  /** bash cold start, sandboxed and not (issue 23; absent in results from before it was measured). */
  bashStart?: BashStartResult | null;
  viewScale?: ViewScaleResult | null;
  explore?: ExploreBenchResult | null;
  /** The session wire protocol: SSE fan-out, latency, idle connections (issue 34; absent in results from before it was measured). */
  wire?: WireResult | null;
  /** Where W1's time goes at N=64, from a sampled CPU profile (issue 33 item 7; absent in results from before it was measured). */
  profile?: WhereTimeGoesResult | null;
}

/** What the table shows besides results.json: the floor's side of W2/W4, sample counts, mode. */
export interface Notes {
  mode: string;
  /** The 1-minute load average when the run started, and the machine's cores (issue 33 item 8: how quiet the run was). */
  quiet?: { load1: number; cores: number };
  seconds?: number;
  w1?: W1Detail;
  w2?: { reps: number; floorWallOverIdeal: number; skeletonWallOverIdeal: number; breakdown: W2Breakdown; jsonl?: JsonlTiming };
  w3?: { reps: number; worstMs: number };
  w4?: W4Detail;
  w5?: { reps: number; jsonl?: JsonlTiming };
  w6?: W6Detail;
  w7?: { baselineRssMiB: number; peakRssMiB: number; pageStoreBytes?: number } | { notMeasured: string };
  coldStart?: ColdStartDetail | { notMeasured: string };
  w8?: W8Detail;
  store?: StoreDetail | { notMeasured: string };
  bashStart?: { reps: number } | { notMeasured: string };
  viewScale?: { reps: number };
  explore?: { reps: number };
}

/** Per-call cost at N=256 may exceed N=64's by this much and still count as "no worse" (run-to-run noise). */
export const FLAT_TOLERANCE = 1.05;

const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const k = (x: number) => (x >= 1e6 ? `${f(x / 1e6, 2)} M` : x >= 1e3 ? `${f(x / 1e3, 0)} k` : f(x, 0));

export function renderTable(r: Results, notes: Notes): string {
  const rows: string[][] = [];
  if (r.w1) {
    const w = r.w1;
    const m = notes.w1?.modelStreamUs ?? {};
    const sk = notes.w1?.skeletonUs ?? {};
    const ma = notes.w1?.machinesUs ?? {};
    for (const n of [1, 8, 64, 256] as const) {
      const p = w[`n${n}`];
      const target = n === 64 || n === 256 ? '≤ 40 (issue 17; issue 4: ≤ 80)' : '—';
      const holds = n === 64 || n === 256 ? yes(p.ratio <= 40) : '';
      const detail = [
        ma[n] !== undefined ? `dsh's machines alone, every stage stubbed ${f(ma[n]!, 1)} µs (×${f(ma[n]! / p.floorUs, 0)})` : '',
        sk[n] !== undefined ? `XState actor-per-call skeleton ${f(sk[n]!, 1)} µs (×${f(sk[n]! / p.floorUs, 0)})` : '',
        m[n] !== undefined ? `scripted model's stream ${f(m[n]!, 1)} µs` : '',
      ].filter(Boolean).join('; ');
      rows.push([`W1 N=${n}`, 'µs per call: dsh, floor, dsh ÷ floor', `${f(p.dshUs)} µs, ${f(p.floorUs, 2)} µs, **×${f(p.ratio, 0)}**`, target, holds, detail]);
    }
    // Paired since session 25 (each N=256 sample beside an N=64 one); older results: the medians' ratio.
    const flat = w.n256.flatRatio ?? w.n256.dshUs / w.n64.dshUs;
    for (const n of [64, 256] as const) {
      const mr = w[`n${n}`].machinesRatio;
      if (mr === undefined) continue;
      rows.push([
        `W1 N=${n} vs its machines`,
        `dsh's µs per call ÷ its machines alone, every stage stubbed (\`w1.n${n}.machinesRatio\`; each sample beside a dsh sample)`,
        `×${f(mr, 2)}`,
        '≤ 1.5 (issue 33)',
        yes(mr <= 1.5),
        ma[n] !== undefined ? `machines alone ${f(ma[n]!, 1)} µs per call: the scheduler and one toolCall actor per call, as a step runs them (bench/lib/machinesAlone.ts)` : '',
      ]);
    }
    for (const [label, ratio, us, name] of [
      ['the AI SDK', w.n64.aiSdkRatio, notes.w1?.aiSdkUs, '`streamText` (ai 6), the same scripted model, `needsApproval: () => false`'],
      ['agents-core', w.n64.agentsCoreRatio, notes.w1?.agentsCoreUs, "`Runner` (@openai/agents-core 0.14), a model giving the same two answers, tracing off, `needsApproval` resolving false"],
    ] as const) {
      if (ratio === undefined) continue;
      rows.push([
        `W1 N=64 vs ${label}`,
        `dsh's µs per call ÷ ${label}'s on the same turn, each sample beside a dsh sample`,
        `×${f(ratio, 2)}`,
        '< 1 (issue 33)',
        yes(ratio < 1),
        us !== undefined ? `${label} ${f(us)} µs per call: ${name}` : '',
      ]);
    }
    const ir = w.n64.inspectedRatio;
    if (ir !== undefined) {
      rows.push([
        'W1 N=64 inspected',
        'µs per call with an inspector attached ÷ without (`w1.n64.inspectedRatio`)',
        `×${f(ir, 2)}`,
        '≤ 1.3',
        yes(ir <= 1.3),
        notes.w1?.inspectedUs !== undefined ? `${f(notes.w1.inspectedUs)} µs per call inspected (an inspector that counts every event by type)` : '',
      ]);
    }
    const tr = w.n64.telemetryRatio;
    if (tr !== undefined) {
      rows.push([
        'W1 N=64 telemetry on',
        'µs per call with OpenTelemetry on (the SDK: spans and metrics) ÷ off (`w1.n64.telemetryRatio`)',
        `×${f(tr, 2)}`,
        '≤ 1.15 (issue 27)',
        yes(tr <= 1.15),
        notes.w1?.telemetryUs !== undefined ? `${f(notes.w1.telemetryUs)} µs per call with telemetry (BatchSpanProcessor to an exporter that drops, metrics held); off: no \`telemetry\` option` : '',
      ]);
    }
    const nr = w.n64.noopTelemetryRatio;
    if (nr !== undefined) {
      rows.push([
        'W1 N=64 telemetry, no provider',
        'the same with `@opentelemetry/api` and no tracer provider registered ÷ off (`w1.n64.noopTelemetryRatio`)',
        `×${f(nr, 2)}`,
        '≤ 1.03 (issue 33)',
        yes(nr <= 1.03),
        notes.w1?.noopTelemetryUs !== undefined ? `${f(notes.w1.noopTelemetryUs)} µs per call (the turn's span records nothing, so no child spans; the stage stream and the metrics still run)` : '',
      ]);
    }
    rows.push(['W1 N=256 vs 64', w.n256.flatRatio !== undefined ? 'per call, N=256 ÷ N=64 (`w1.n256.flatRatio`; each N=256 sample beside an N=64 one)' : 'per call, N=256 ÷ N=64', `×${f(flat, 2)}`, '≤ 1 (noise ±5 %)', yes(flat <= FLAT_TOLERANCE), '']);
  }
  if (r.w2) {
    const ok = r.w2.wallOverIdeal <= 1.05 && r.w2.inOrder && r.w2.maxInFlight === 16;
    const ok33 = r.w2.wallOverIdeal <= 1.1 && r.w2.inOrder && r.w2.maxInFlight === 16;
    rows.push(['W2', 'wall ÷ 20 ms; max in flight; in order', `${f(r.w2.wallOverIdeal, 3)}; ${r.w2.maxInFlight}; ${r.w2.inOrder ? 'yes' : 'no'}`, '≤ 1.05, 16, in order (issue 33: ≤ 1.10)', `${yes(ok)} (≤ 1.10: ${yes(ok33)})`, notes.w2 ? `floor ${f(notes.w2.floorWallOverIdeal, 3)}; XState actor-per-call skeleton (one batch, no steps/stages/log) ${f(notes.w2.skeletonWallOverIdeal, 3)}` : '']);
  }
  const jw2 = notes.w2?.jsonl;
  if (r.w2 && jw2) {
    rows.push(['W2 JSONL', 'the same, session log in a JSONL file (fsync; bodies wait for their tool/call to be durable)', `${f(jw2.wall, 3)}; ${jw2.inOrder ? '16; yes' : 'no'}`, '—', '', `in-memory log ${f(r.w2.wallOverIdeal, 3)} (×${f(jw2.wall / r.w2.wallOverIdeal, 3)}); first body ${f(jw2.toFirstBodyMs, 2)} ms after the turn (in-memory ${f(notes.w2!.breakdown.toFirstBodyMs, 2)}); ${f(jw2.fsyncsPerTurn, 0)} fsyncs per turn`]);
  }
  if (r.w3) {
    rows.push(['W3', 'commit lag (median of per-run max); in order', `${f(r.w3.commitLagMs, 2)} ms; ${r.w3.inOrder ? 'yes' : 'no'}`, '≤ 1 ms, in order', yes(r.w3.commitLagMs <= 1 && r.w3.inOrder), notes.w3 ? `worst run ${f(notes.w3.worstMs, 2)} ms` : '']);
  }
  if (r.w4) {
    const d = notes.w4;
    rows.push(['W4', `heap growth per turn (${d ? d.turns.toLocaleString('en') : '?'} turns of N=8)`, `${f(r.w4.growthBytesPerTurn, 1)} B`, '≤ 10 B', yes(r.w4.growthBytesPerTurn <= 10), d ? `floor ${f(d.floorGrowthBytesPerTurn, 1)} B` : '']);
    rows.push(['W4', 'heap of one idle session (after one N=8 turn)', `${f(r.w4.idleSessionBytes / 1024, 1)} KiB`, '—', '', d ? `fresh runtime ${f(d.freshSessionBytes / 1024, 1)} KiB; one finished turn (its log) ${f(d.turnBytes / 1024, 1)} KiB` : '']);
  }
  if (r.w5) {
    const over = r.w5.wallMs / r.w5.idealMs - 1;
    rows.push(['W5', 'wall vs ideal vs no overlap', `${f(r.w5.wallMs, 0)} / ${f(r.w5.idealMs, 0)} / ${f(r.w5.noOverlapMs, 0)} ms (${over >= 0 ? '+' : ''}${f(over * 100, 1)} %)`, 'within 5 % of ideal', yes(over <= 0.05), '']);
    const jw5 = notes.w5?.jsonl;
    if (jw5) {
      const jover = jw5.wall / r.w5.idealMs - 1;
      rows.push(['W5 JSONL', 'the same, session log in a JSONL file (fsync; bodies wait for their tool/call to be durable)', `${f(jw5.wall, 0)} ms (${jover >= 0 ? '+' : ''}${f(jover * 100, 1)} %)${jw5.inOrder ? '' : '; out of order'}`, '—', '', `in-memory log ${f(r.w5.wallMs, 0)} ms; first body ${f(jw5.toFirstBodyMs, 1)} ms after the turn; ${f(jw5.fsyncsPerTurn, 0)} fsyncs per turn`]);
    }
  }
  if (r.w6) {
    const d = notes.w6;
    rows.push(['W6', 'JSONL append, fsync at commit points (group commit)', `${k(r.w6.appendEventsPerSec)} events/s`, '≥ 50 k/s', yes(r.w6.appendEventsPerSec >= 50_000), d ? `${k(d.appendEvents)} events, ${d.commitPoints.toLocaleString('en')} commit points, ${d.commits.toLocaleString('en')} fsyncs` : '']);
    rows.push(['W6', `replay, validated (${d ? k(d.replayEvents) : '?'} events)`, `${k(r.w6.replayEventsPerSec)} events/s`, '≥ 300 k/s (issue 16.6)', yes(r.w6.replayEventsPerSec >= 300_000), d ? `${f(d.replayMiB, 0)} MiB file; JSON.parse of every line alone (no validation, file already read) ${k(d.parseOnlyEventsPerSec)} events/s` : '']);
  }
  const w7n = notes.w7;
  if (r.w7.peakRssOverInput !== null && r.w7.ms !== null) {
    rows.push(['W7', 'one 100 MiB output spilled: peak RSS growth ÷ input; time', `${f(r.w7.peakRssOverInput, 2)}×; ${f(r.w7.ms, 0)} ms`, '≤ 1.5×', yes(r.w7.peakRssOverInput <= 1.5), w7n && 'peakRssMiB' in w7n ? `RSS ${f(w7n.baselineRssMiB, 0)} → peak ${f(w7n.peakRssMiB, 0)} MiB` : '']);
    if (r.w7.logBytesPerSpill != null) {
      rows.push(['W7', 'its JSONL log bytes (tool/call + tool/spilled + tool/result)', `${f(r.w7.logBytesPerSpill / 1024, 1)} KiB`, '< 1 MiB', yes(r.w7.logBytesPerSpill < 2 ** 20), '']);
    }
    if (r.w7.pageReadMs != null) {
      const b = w7n && 'pageStoreBytes' in w7n ? w7n.pageStoreBytes : undefined;
      rows.push(['W7', 'read of a 200-line page of it by locator (median of 3)', `${f(r.w7.pageReadMs, 1)} ms`, '∝ page', '', b !== undefined ? `${f(b / 1024, 1)} KiB read from the spill store per page` : '']);
    }
  } else if (w7n && 'notMeasured' in w7n) {
    rows.push(['W7', 'one 100 MiB output spilled', 'not measured', '≤ 1.5×', '', w7n.notMeasured]);
  }
  const csn = notes.coldStart;
  if (r.coldStart) {
    const c = r.coldStart;
    const d = csn && 'reps' in csn ? csn : undefined;
    const how = d ? `medians of ${d.reps} interleaved spawns of ${d.bin}` : '';
    rows.push(['cold start', '`dsh --version` ms; `node -e 0` ms; ratio', `${f(c.versionMs, 0)} ms; ${f(c.nodeMs, 0)} ms; **×${f(c.ratio, 2)}**`, '—', '', how]);
    rows.push(['cold start', '`dsh run` (embedded model) to its first model request ms; `node -e 0` ms', `**${f(c.runMs, 0)} ms**; ${f(c.nodeMs, 0)} ms (×${f(c.runRatio, 2)})`, `≤ ${COLD_RUN_TARGET_MS} ms`, c.runMs <= COLD_RUN_TARGET_MS ? 'yes' : '**no**', how]);
  } else if (csn && 'notMeasured' in csn) {
    rows.push(['cold start', '`dsh --version`; `dsh run` to its first model request', 'not measured', `≤ ${COLD_RUN_TARGET_MS} ms (run)`, '', csn.notMeasured]);
  }
  const bsn = notes.bashStart;
  if (r.bashStart) {
    const b = r.bashStart;
    const how = bsn && 'reps' in bsn ? `medians of ${bsn.reps} interleaved calls each, through a runtime; process-group (no namespace) ${f(b.processGroupMs, 1)} ms` : '';
    rows.push(['bash start', 'ms per `true` call: sandboxed (workspace-write, bubblewrap); unsandboxed (full-access, PID namespace); ratio', `${f(b.sandboxedMs, 1)} ms; ${f(b.unsandboxedMs, 1)} ms; **×${f(b.ratio, 2)}**`, '—', '', how]);
  } else if (bsn && 'notMeasured' in bsn) {
    rows.push(['bash start', 'ms per `true` call, sandboxed ÷ unsandboxed', 'not measured', '—', '', bsn.notMeasured]);
  }
  if (r.viewScale) {
    const v = r.viewScale;
    const how = notes.viewScale ? `medians of ${notes.viewScale.reps} interleaved turns each; the view subscribed and reading every snapshot it is told of` : '';
    rows.push(['session view', `one turn of ${v.calls} calls: without a view ms; with createSessionView ms; ratio`, `${f(v.plainMs, 0)} ms; ${f(v.viewMs, 0)} ms; **×${f(v.ratio, 2)}**`, `≤ ×${VIEW_SCALE_TARGET}`, yes(v.ratio <= VIEW_SCALE_TARGET), how]);
  }
  if (r.explore) {
    const x = r.explore;
    const how = notes.explore ? `median of ${notes.explore.reps} explorations of ${x.runs} runs (${x.crashRuns} of them crashed and resumed); every approval answer, body ending, order and cancel; up to 2 deviations, then sampled` : '';
    rows.push(['explore', '`dsh/testing` runs explored per second: a three-tool agent with two listeners, crash points included', `**${f(x.runsPerSec, 0)}** runs/s`, '—', '', how]);
  }
  if (r.wire) {
    const w = r.wire;
    rows.push(['wire', `events per second from append to ${w.clients} SSE clients on loopback (${k(w.events)} events)`, `**${f(w.eventsPerSec, 0)}** events/s`, '—', '', 'createSessionHandler on node:http, one in-memory session; appends in bursts of 100; clients in the same process']);
    rows.push(['wire', 'append-to-client latency, median; p99 (every 7th event × every client)', `${f(w.latencyMedianMs, 2)} ms; ${f(w.latencyP99Ms, 2)} ms`, '—', '', 'both ends read the same clock']);
    rows.push(['wire', `memory per idle connection (${k(w.idleConnections)} connections following a quiet session), heap + external`, `**${f(w.bytesPerIdleConnection / 1024, 1)} KiB**`, '—', '', 'after a GC; the client sockets live in the same process, so this bounds the server\'s share from above']);
  }
  if (r.bundle) {
    const b = r.bundle;
    const kb = (n: number) => `${f(n / 1000, 1)} KB`;
    const parts = Object.entries(b.byPackage).filter(([, n]) => n > 0).map(([p, n]) => `${p} ${kb(n)}`).join(', ');
    const ok = b.gzipBytes <= BUNDLE_BUDGET_BYTES && (b.esbuildGzipBytes ?? 0) <= BUNDLE_BUDGET_BYTES && b.zodCopies === 1;
    const esbuild = b.esbuildGzipBytes !== undefined ? `; esbuild **${kb(b.esbuildGzipBytes)}**` : '';
    const withView = b.withViewGzipBytes !== undefined ? `; a page with the session view too (\`dsh\` + \`dsh/view\`, Vite) ${kb(b.withViewGzipBytes)}` : '';
    rows.push(['bundle', '`dsh` entry for the browser (every export kept), minified + gzip -9: Vite; esbuild; copies of zod', `**${kb(b.gzipBytes)}** (${kb(b.minBytes)} min)${esbuild}; zod ×${b.zodCopies}`, `≤ ${BUNDLE_BUDGET_BYTES / 1000} KB with both, zod once`, yes(ok), `of which ${parts}; re2js ${b.re2js ? 'in it' : 'not in it (dsh/policies)'}${withView}`]);
    if (b.react) {
      rows.push(['bundle', '`dsh/react` entry for the browser without React itself (Vite, every export kept), minified + gzip -9', `**${kb(b.react.gzipBytes)}** (${kb(b.react.minBytes)} min)`, `≤ ${REACT_BUNDLE_BUDGET_BYTES / 1000} KB`, yes(b.react.gzipBytes <= REACT_BUNDLE_BUDGET_BYTES), 'the hooks only: the session view they read is `dsh/view` (see the `dsh` row)']);
    }
  }
  if (r.w8) {
    const w = r.w8;
    const d = notes.w8;
    rows.push(['W8', 'CPU µs per step with 1k / 10k / 100k events in the log; 100k ÷ 1k', `${f(w.us1k, 0)} / ${f(w.us10k, 0)} / ${f(w.us100k, 0)} µs; **×${f(w.ratio, 2)}**`, '≤ 1.2', yes(w.ratio <= 1.2), d ? `medians of ${d.reps} interleaved repetitions of ${d.turnsPerSample} turns (2 steps, 8 calls)` : '']);
    if (d) {
      const resume = w.resumeMs1M ?? null;
      rows.push([
        'W8',
        `resume of a ${k(d.resumeEvents)}-event JSONL session (from its last checkpoint)`,
        resume !== null ? `**${f(resume, 0)} ms**` : 'not measured (quick)',
        '—',
        '',
        `${f(d.fileMiB, 0)} MiB file; last checkpoint ${f(d.checkpointMiB, 1)} MiB, ${k(d.eventsAfterCheckpoint)} events after it; whole file replayed instead ${d.fullReplayMs !== null ? `${f(d.fullReplayMs, 0)} ms` : '?'}`,
      ]);
    }
  }
  rows.push(...storeRows(r.store, notes.store, f));
  if (r.profile) rows.push(...profileRows(r.profile));
  const head = ['workload', 'measure', 'dsh', 'target', 'holds', 'reference / detail'];
  const lines = [
    `dsh bench — node ${r.node}, ${r.date}, ${r.quick ? '**quick** run' : 'full run'}, ${notes.mode}${notes.seconds ? `, ${notes.seconds.toFixed(0)} s` : ''}${notes.quiet ? `, load ${notes.quiet.load1.toFixed(2)} on ${notes.quiet.cores} cores at the start` : ''}`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
  if (notes.w1) {
    const t = notes.w1.turnMs;
    lines.push('', `W1 median ms per whole turn (${notes.w1.reps} interleaved repetitions): ` + Object.keys(t.dsh).map((n) => `N=${n} dsh ${f(t.dsh[Number(n)]!, 2)} / floor ${f(t.floor[Number(n)]!, 3)}`).join('; '));
  }
  if (notes.w2) {
    const b = notes.w2.breakdown;
    lines.push(
      '',
      `W2, where a dsh turn's time goes (medians of ${notes.w2.reps}): first body starts ${f(b.toFirstBodyMs, 2)} ms after the turn; ` +
        `the 16th ${f(b.dispatchSpreadMs, 2)} ms after the first (${f((b.dispatchSpreadMs * 1000) / 15, 0)} µs per call dispatched); ` +
        `the last body's timer fires ${f(b.lastBodyOverMs, 2)} ms late; from the last body's end to turn/end (commit, second step) ${f(b.tailMs, 2)} ms.`,
    );
  }
  return lines.join('\n');
}

/** A side's split: its areas, largest first, with their share. */
function split(side: ProfiledSide): string {
  return [...AREAS]
    .filter((a) => side.usPerCall[a] >= 0.05)
    .sort((a, b) => side.usPerCall[b] - side.usPerCall[a])
    .map((a) => `${AREA_LABELS[a]} ${f(side.usPerCall[a])} µs (${f((100 * side.usPerCall[a]) / side.totalUsPerCall, 0)} %)`)
    .join('; ');
}

/** What `b` adds to `a`, by area, largest first. */
function added(a: ProfiledSide, b: ProfiledSide): string {
  return [...AREAS]
    .map((x) => [x, b.usPerCall[x] - a.usPerCall[x]] as const)
    .filter(([, d]) => Math.abs(d) >= 0.05)
    .sort((x, y) => y[1] - x[1])
    .map(([x, d]) => `${AREA_LABELS[x]} ${d >= 0 ? '+' : '−'}${f(Math.abs(d))}`)
    .join('; ');
}

function profileRows(p: WhereTimeGoesResult): string[][] {
  const how = `sampled CPU µs of ${p.turns} W1 turns ÷ (turns × ${p.n}), by area`;
  const us = (side: ProfiledSide) => `**${f(side.totalUsPerCall)} µs**`;
  const diff = (a: ProfiledSide, b: ProfiledSide) => `${b.totalUsPerCall >= a.totalUsPerCall ? '+' : '−'}${f(Math.abs(b.totalUsPerCall - a.totalUsPerCall))} µs`;
  return [
    ['profile N=64', `where dsh's time per call goes (${how})`, us(p.dsh), '—', '', split(p.dsh)],
    ['profile N=64', "the same for dsh's machines alone, every stage stubbed (the reference of `w1.n64.machinesRatio`)", us(p.machines), '—', '', split(p.machines)],
    ['profile N=64', 'what dsh adds to its machines alone, by area (dsh − machines alone)', diff(p.machines, p.dsh), '—', '', added(p.machines, p.dsh)],
    ['profile N=64', 'where the time goes with OpenTelemetry on (the SDK, as the telemetry row)', us(p.telemetry), '—', '', split(p.telemetry)],
    ['profile N=64', 'what telemetry on adds, by area (telemetry on − off)', diff(p.dsh, p.telemetry), '—', '', added(p.dsh, p.telemetry)],
  ];
}
