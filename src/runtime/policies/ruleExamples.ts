/**
 * Rules that carry their own tests (issue 26 item 2): a permission rule or a bash pattern may list
 * example calls under `allow` (runs without a question), `ask` and `deny`, and the policies must
 * decide each as listed. The examples are checked with a policy checker (policyCheck.ts): through
 * the real pipeline, no tool body. A failure names the rule, the example, what was expected and
 * what was decided instead, and by whom.
 */
import { describeProvenance } from '../../protocol/describeProvenance.js';
import type { PolicyConfig } from './applyConfig.js';
import type { PolicyCall, PolicyChecker, PolicyOutcome } from './policyCheck.js';

export type { ExampleCall, RuleExamples } from './exampleTypes.js';

/** What an example says the policies decide about its call. */
export type ExpectedOutcome = Exclude<PolicyOutcome, 'invalid'>;

/** One example to check: the rule it belongs to (as a config path), the call and the outcome it must get. */
export interface RuleExample {
  /** `permissions[1] (tool "write", path ".env*")`, `bash.deny[0] /^rm\s/`. */
  readonly rule: string;
  readonly call: PolicyCall;
  readonly expected: ExpectedOutcome;
}

/** A failed example: the rule, the call (short JSON), the outcome it should have had and what it got. */
export interface ExampleFailure {
  readonly rule: string;
  readonly example: string;
  readonly expected: ExpectedOutcome;
  readonly got: string;
}

const OUTCOMES: readonly ExpectedOutcome[] = ['allow', 'ask', 'deny'];

/** Every example the config's permission rules and bash patterns carry, in config order. */
export function examplesOf(config: PolicyConfig): RuleExample[] {
  const out: RuleExample[] = [];
  config.permissions?.forEach((rule, i) => {
    const name = `permissions[${i}] (tool "${rule.tool}"${rule.path === undefined ? '' : `, path "${rule.path}"`})`;
    for (const expected of OUTCOMES) {
      for (const c of rule.examples?.[expected] ?? []) out.push({ rule: name, call: { toolName: c.tool, input: c.args }, expected });
    }
  });
  for (const list of ['deny', 'allow'] as const) {
    config.bash?.[list]?.forEach((entry, i) => {
      // Stryker disable next-line ConditionalExpression,StringLiteral: a plain pattern has no examples, so going on would find none
      if (typeof entry === 'string') return;
      const name = `bash.${list}[${i}] /${entry.pattern}/`;
      for (const expected of OUTCOMES) {
        for (const command of entry.examples?.[expected] ?? []) out.push({ rule: name, call: { toolName: 'bash', input: { command } }, expected });
      }
    });
  }
  return out;
}

/** A call as a short line for a message. */
export function describeCall(call: PolicyCall): string {
  const args = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
  return `${call.toolName} ${args.length > 160 ? `${args.slice(0, 159)}…` : args}`;
}

/** Checks each example in turn; returns the ones decided otherwise than listed. */
export async function checkExamples(examples: readonly RuleExample[], checker: PolicyChecker): Promise<ExampleFailure[]> {
  const failures: ExampleFailure[] = [];
  for (const ex of examples) {
    const v = await checker.check(ex.call);
    if (v.outcome === ex.expected) continue;
    // Stryker disable next-line StringLiteral: a verdict with no decision that is not an allow is a refusal or an invalid call, and carries the error it ended with as its reason
    const by = v.decision ? ` (${describeProvenance(v.decision)})` : v.outcome === 'allow' ? ' (no rule decided)' : v.reason ? ` (${v.reason})` : '';
    failures.push({ rule: ex.rule, example: describeCall(ex.call), expected: ex.expected, got: `${v.outcome}${by}` });
  }
  return failures;
}

/** A failure as one line: `permissions[1] (tool "write"): example write {"path":".env"} should be denied, but: allow (no rule decided)`. */
export function describeFailure(f: ExampleFailure): string {
  const verb = { allow: 'be allowed', ask: 'be asked about', deny: 'be denied' }[f.expected];
  return `${f.rule}: example ${f.example} should ${verb}, but: ${f.got}`;
}
