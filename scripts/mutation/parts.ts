/**
 * The core rooms `npm run mutate` covers, each a part of the run, with the share of mutants its
 * tests must kill (issue 37), and the arithmetic of a part's score. Pure: the script and the docs
 * test both read it.
 */
import type { MutantResult } from '@stryker-mutator/api/core';

export interface MutationPart {
  /** The core room the part belongs to (its target is the room's). */
  readonly room: string;
  /** Stryker `mutate` globs. */
  readonly mutate: readonly string[];
  /** The share of mutants (in %) the part's tests must kill. */
  readonly target: number;
}

/** Parts in run order; `machines/` and the policies are split so that each part fits about half an hour on 2 cores. */
export const MUTATION_PARTS: Readonly<Record<string, MutationPart>> = {
  'machines-batch': { room: 'machines', mutate: ['machines/scheduler.ts', 'machines/commitGate.ts'], target: 95 },
  'machines-call': { room: 'machines', mutate: ['machines/toolCall.ts', 'machines/callStages.ts'], target: 95 },
  'machines-step': {
    room: 'machines',
    mutate: ['machines/step.ts', 'machines/modelStream.ts', 'machines/toolInputTracker.ts', 'machines/jsonObjectEnd.ts', 'machines/modelReport.ts', 'machines/modelCallOptions.ts'],
    target: 95,
  },
  'machines-turn': { room: 'machines', mutate: ['machines/turn.ts', 'machines/turnLifecycle.ts', 'machines/steering.ts'], target: 95 },
  'machines-commit': {
    room: 'machines',
    mutate: ['machines/groupCommit.ts', 'machines/snapshotSelectors.ts', 'machines/registry.ts', 'machines/callStageNames.ts'],
    target: 95,
  },
  'pipeline-decide': {
    room: 'pipeline',
    mutate: ['src/runtime/pipeline/preExecute.ts', 'src/runtime/pipeline/approval.ts', 'src/runtime/pipeline/approvalPreview.ts', 'src/runtime/pipeline/approvalService.ts', 'src/runtime/pipeline/guard.ts', 'src/runtime/pipeline/listenerAnswers.ts', 'src/runtime/pipeline/listenerTimer.ts'],
    target: 95,
  },
  'pipeline-run': {
    room: 'pipeline',
    mutate: ['src/runtime/pipeline/prepare.ts', 'src/runtime/pipeline/draft.ts', 'src/runtime/pipeline/execute.ts', 'src/runtime/pipeline/progress.ts', 'src/runtime/pipeline/postExecute.ts', 'src/runtime/pipeline/finalize.ts', 'src/runtime/pipeline/callStages.ts', 'src/runtime/pipeline/stageDeps.ts'],
    target: 95,
  },
  'policies-shell': { room: 'policies', mutate: ['src/runtime/policies/shellCommands.ts', 'src/runtime/policies/shellSyntax.ts', 'src/runtime/policies/bashDenyGuard.ts'], target: 90 },
  'policies-hooks': {
    room: 'policies',
    mutate: ['src/runtime/policies/commandHooks.ts', 'src/runtime/policies/hookExamples.ts', 'src/runtime/policies/policyCheck.ts', 'src/runtime/policies/askBeforeChanges.ts', 'src/runtime/policies/configuredPolicies.ts', 'src/runtime/policies/planMode.ts'],
    target: 90,
  },
  'policies-rules': {
    room: 'policies',
    mutate: ['src/runtime/policies/commandRules.ts', 'src/runtime/policies/pathGlob.ts', 'src/runtime/policies/applyConfig.ts', 'src/runtime/policies/permissionRules.ts', 'src/runtime/policies/toolPath.ts', 'src/runtime/policies/ruleExamples.ts', 'src/runtime/policies/exampleTypes.ts'],
    target: 90,
  },
  view: { room: 'view', mutate: ['src/view/**/*.ts', '!src/view/index.ts'], target: 90 },
  'cli-policy': { room: 'cli-policy', mutate: ['src/cli/policy/**/*.ts'], target: 90 },
};

/** The part a repository path belongs to, if it is in a core room. */
export function partOf(path: string): string | undefined {
  if (!path.endsWith('.ts')) return undefined;
  return Object.entries(MUTATION_PARTS).find(([, part]) => part.mutate.some((glob) => !glob.startsWith('!') && matches(glob, path)))?.[0];
}

/** A glob of the form `<dir>/**` + `/*.ts`, or an exact path. */
function matches(glob: string, path: string): boolean {
  return glob.endsWith('/**/*.ts') ? path.startsWith(glob.slice(0, -'**/*.ts'.length)) : glob === path;
}

export interface FileScore {
  readonly tested: number;
  readonly killed: number;
  readonly survived: number;
  readonly noCoverage: number;
  /** (killed + timed out) ÷ tested, in %. */
  readonly score: number;
}

export interface PartScore extends FileScore {
  readonly files: Readonly<Record<string, FileScore>>;
  readonly minutes?: number;
}

export interface MutationScores {
  parts: Record<string, PartScore>;
}

const tally = (results: readonly MutantResult[]): FileScore => {
  let killed = 0;
  let survived = 0;
  let noCoverage = 0;
  for (const r of results) {
    if (r.status === 'Killed' || r.status === 'Timeout') killed++;
    else if (r.status === 'Survived') survived++;
    else if (r.status === 'NoCoverage') noCoverage++;
  }
  const tested = killed + survived + noCoverage;
  return { tested, killed, survived, noCoverage, score: tested === 0 ? 100 : Math.floor((killed / tested) * 1000) / 10 };
};

/** A part's score and its files', from Stryker's results (static, ignored and broken mutants left out). */
export function scoreOf(results: readonly MutantResult[]): PartScore {
  const byFile = new Map<string, MutantResult[]>();
  for (const r of results) byFile.set(r.fileName, [...(byFile.get(r.fileName) ?? []), r]);
  const files: Record<string, FileScore> = {};
  for (const [file, rs] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) files[file.replace(/\\/g, '/').replace(/^.*?(?=(machines|src)\/)/, '')] = tally(rs);
  return { ...tally(results), files };
}
