/**
 * Permission rules (`allow` / `deny` / `ask` per tool and path glob) as one pre-execute listener
 * (SPEC §2.1: the permission gate lives in the reorderable pre-execute layer).
 *
 * The first rule that matches a call decides; no rule matching hands over with `next()`.
 * - `tool` is a glob over tool names (`write`, `*`, `mcp__github__*`).
 * - `path` (optional) is a glob over the call's `path` argument, relative to the workspace root,
 *   compiled to RE2 (pathGlob.ts: picomatch's syntax with `dot: true`, so `**` covers dotfiles,
 *   matched in linear time: the path is the model's). The argument is normalised first
 *   (toolPath.ts): `./secrets/k`, `x/../secrets/k` and `<root>/secrets/k` all match `secrets/**`.
 *   A path that leaves the workspace (`../x`, `/etc/passwd`) matches every `deny` and `ask` rule
 *   that names a path and no `allow` rule, so no allow rule lets it skip a question.
 * Limits (documented in the README): only an argument named `path` is looked at; a rule with a
 * `path` does not match a call without one (`bash`, `grep` over the whole root, `read` by locator),
 * and `grep`/`glob` over a parent directory (`path: "."`) is not matched by `secrets/**`; symlinks
 * are not resolved (the sandbox does that for the root only). Pair a `deny` on paths with
 * `ask`/`deny` for `bash`, which can reach any file.
 */
import type { PreExecuteDecision } from '../../protocol/index.js';
import type { PreExecuteListener } from '../hooks.js';
import { isPromise } from '../pipeline/listenerAnswers.js';
import { compileGlob } from './pathGlob.js';
import type { ExampleCall, RuleExamples } from './exampleTypes.js';
import { normaliseToolPath } from './toolPath.js';

/** What a permission rule decides: allow, deny, or ask the person. */
export type PermissionDecision = 'allow' | 'deny' | 'ask';

/** One permission rule: a tool glob, an optional path glob, and what it decides. */
export interface PermissionRule {
  /** Glob over tool names. */
  readonly tool: string;
  /** Glob over the `path` argument, relative to the workspace root. Absent: every call of the tool. */
  readonly path?: string;
  readonly decision: PermissionDecision;
  /** Shown to the model (deny) or the approver (ask). */
  readonly reason?: string;
  /** Calls the rule is for, and what the policies must decide about each (ruleExamples.ts). */
  readonly examples?: RuleExamples<ExampleCall>;
  /** The file the rule came from (set by the config loader), named when it denies. */
  readonly from?: string;
}

/** The rules of `permissionRules` (first match wins), and the workspace root paths are relative to. */
export interface PermissionRulesOptions {
  readonly rules: readonly PermissionRule[];
  /** The workspace root (absolute); absolute path arguments under it are made relative. */
  readonly root?: string;
}

/** A pre-execute listener applying `rules` in order (first match decides). */
export function permissionRules(options: PermissionRulesOptions): PreExecuteListener {
  const compiled = options.rules.map((rule, i) => ({
    rule,
    index: i,
    tool: compileGlob(rule.tool),
    path: rule.path === undefined ? undefined : compileGlob(rule.path),
  }));
  const root = options.root;
  return (call, next) => {
    // Arguments that are no object have no `path` (a number's or a string's is undefined too).
    const raw = (call.args as { path?: unknown } | null | undefined)?.path;
    const where = raw === undefined ? undefined : normaliseToolPath(raw, root);
    for (const c of compiled) {
      if (!c.tool(call.toolName)) continue;
      if (c.path) {
        if (!where) continue;
        if (where.inside ? !c.path(where.rel) : c.rule.decision === 'allow') continue;
      }
      const mine = decide(c.rule, c.index, call.toolName, where);
      if (mine.kind !== 'ask') return mine;
      // Deny before ask (issue 32 item 2): a later rule, pattern or hook that denies is heard first.
      const later = next();
      return isPromise(later) ? later.then((d) => (d.kind === 'deny' ? d : mine)) : later.kind === 'deny' ? later : mine;
    }
    return next();
  };
}

function decide(
  rule: PermissionRule,
  index: number,
  toolName: string,
  where: ReturnType<typeof normaliseToolPath> | undefined,
): PreExecuteDecision {
  const named = `permissions[${index}] (tool "${rule.tool}"${rule.path === undefined ? '' : `, path "${rule.path}"`})`;
  if (rule.decision === 'allow') return { kind: 'allow', rule: named };
  const target = where === undefined ? '' : where.inside ? ` on "${where.rel}"` : ' on a path outside the workspace';
  const what = `permission rule ${index} (tool "${rule.tool}"${rule.path === undefined ? '' : `, path "${rule.path}"`})`;
  if (rule.decision === 'ask') return { kind: 'ask', reason: rule.reason ?? `${what} asks before ${toolName}${target}`, rule: named };
  return {
    kind: 'deny',
    rule: named,
    reason: rule.reason ?? `${what}${rule.from !== undefined ? ` of ${rule.from}` : ''} denies ${toolName}${target}; this is the user's configuration, so do not retry it another way: use another path or tool, or ask the user`,
  };
}
