/**
 * The examples of the config's deciding hooks (`preExecute`, `guard`), run against the real hook:
 * an `allow` example must not be denied, a `deny` example must be. A config whose example fails is
 * refused when it loads (`dsh run`), naming the hook and the example; `dsh policy test` lists the
 * same failures. Each example is one run of the hook, as a call would be (same input, same
 * runner, same timeout); an example the hook's `tools`/`paths` do not match never reaches it.
 */
import {
  askGuardHook,
  askPreExecuteHook,
  commandHookField,
  compileHook,
  DEFAULT_COMMAND_HOOK_TIMEOUT_MS,
  type CommandHookEntry,
  type CommandHooksConfig,
  type HookExampleCall,
  type HookRunner,
} from './commandHooks.js';
import type { ExampleFailure } from './ruleExamples.js';

// An example a hook did not meet is an ExampleFailure (ruleExamples.ts): `rule` names the hook
// (`hooks.preExecute[0] (.dsh/hooks/check.sh)`), `example` the call as short JSON, `got` what
// happened (`deny: <reason>`, `allow`, `ask`, `next`, `not consulted (…)` or `HOOK_FAILED: …`).

function shortJson(call: HookExampleCall): string {
  const s = JSON.stringify({ tool: call.tool, args: call.args });
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}

function shortText(s: string): string {
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}

/** Runs every example of every preExecute and guard hook; resolves with the ones that fail (in config order). */
export async function checkHookExamples(config: { readonly hooks?: CommandHooksConfig }, runner: HookRunner, root?: string): Promise<ExampleFailure[]> {
  const failures: ExampleFailure[] = [];
  for (const stage of ['preExecute', 'guard'] as const) {
    const entries = config.hooks?.[stage] ?? [];
    for (const [index, entry] of entries.entries()) {
      const hook = compileHook(stage, index, entry, root);
      const rule = commandHookField(stage, index, entry);
      const cases = [
        ...(entry.examples?.allow ?? []).map((call) => ({ call, expected: 'allow' as const })),
        ...(entry.examples?.deny ?? []).map((call) => ({ call, expected: 'deny' as const })),
      ];
      for (const [n, { call, expected }] of cases.entries()) {
        let got: string;
        let denied: boolean;
        if (!hook.matches(call.tool, call.args)) {
          got = `not consulted (the hook's tools/paths do not match this call)`;
          denied = false;
        } else {
          const where = { callId: `example-${n}` };
          const timeoutMs = entry.timeoutMs ?? DEFAULT_COMMAND_HOOK_TIMEOUT_MS;
          try {
            const a = stage === 'guard' ? await askGuardHook(hook, runner, call.tool, call.args, where, timeoutMs) : await askPreExecuteHook(hook, runner, call.tool, call.args, where, timeoutMs);
            denied = a.decision === 'deny';
            got = a.decision === 'deny' ? `deny: ${shortText(a.reason)}` : a.decision;
          } catch (e) {
            // A hook that fails is no answer either way: it meets no example.
            failures.push({ rule, example: shortJson(call), expected, got: `HOOK_FAILED: ${shortText(e instanceof Error ? e.message : String(e))}` });
            continue;
          }
        }
        if (denied !== (expected === 'deny')) failures.push({ rule, example: shortJson(call), expected, got });
      }
    }
  }
  return failures;
}

/** How many examples the config's deciding hooks carry. */
export function countHookExamples(config: { readonly hooks?: CommandHooksConfig }): number {
  const count = (entries?: readonly CommandHookEntry[]) => entries?.reduce((n, e) => n + (e.examples?.allow?.length ?? 0) + (e.examples?.deny?.length ?? 0), 0) ?? 0;
  return count(config.hooks?.preExecute) + count(config.hooks?.guard);
}

/** One line for a failure: `hooks.guard[0] (x): example {…} must be denied, got allow`. */
export function describeExampleFailure(f: ExampleFailure): string {
  return `${f.rule}: the example ${f.example} must be ${f.expected === 'deny' ? 'denied' : 'let through (not denied)'}, but the hook gave ${f.got}`;
}
