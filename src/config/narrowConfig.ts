/**
 * A `dsh.config.json` below the project root (issue 31 item 3, SPEC §10.7) can only narrow what
 * the root and user configs allow: the model of an earlier session could have written it. Of
 * such a file only these count:
 * - `bash.deny`: its patterns are added to the others;
 * - `permissions` rules whose decision is `deny`: they come first (so they win);
 * - `sandbox.mode`: only a stricter mode (read-only < workspace-write < full-access);
 * - `sandbox.network: false`;
 * - `sandbox.denyRead`: its paths are hidden too;
 * - `plan: true`;
 * - `askBefore`: its tools are asked about too (it cannot take one off the list).
 * Anything else it sets (a wider sandbox, the network on, `passEnv`, `hooks`, `mcpServers`,
 * `bash.allow`, `allow`/`ask` rules, the model and its server, instructions, telemetry, limits…)
 * is ignored, and each ignored key is said in one line naming the file and the key.
 */
import { DEFAULT_ASK_BEFORE } from '../runtime/policies/askBeforeChanges.js';
import { visibleLine } from '../protocol/visibleText.js';
import type { DshConfig } from './schema.js';

const SANDBOX_STRICTNESS = ['read-only', 'workspace-write', 'full-access'] as const;
type SandboxMode = (typeof SANDBOX_STRICTNESS)[number];

export interface Narrowed {
  readonly config: DshConfig;
  /** One line per key ignored: `dsh: FILE: KEY ignored (…)`. */
  readonly ignored: readonly string[];
}

/** `base` narrowed by `nested` (a config below the project root, shown as `shownAs`). Pure. */
export function narrowConfig(base: DshConfig, nested: DshConfig, shownAs: string): Narrowed {
  const ignored: string[] = [];
  const ignore = (key: string) => ignored.push(`dsh: ${visibleLine(shownAs)}: ${key} ignored (a config below the project root can only narrow what the root and user configs allow: docs/configuration.md)`);
  const out: DshConfig = { ...base };
  for (const key of Object.keys(nested) as Array<keyof DshConfig>) {
    if (nested[key] === undefined || key === '$schema') continue;
    switch (key) {
      case 'plan':
        if (nested.plan === true) out.plan = true;
        else if (base.plan === true) ignore('plan: false');
        break;
      case 'askBefore': {
        const asked = base.askBefore ?? DEFAULT_ASK_BEFORE;
        out.askBefore = [...new Set([...asked, ...nested.askBefore!])];
        if (asked.some((t) => !nested.askBefore!.includes(t))) ignore(`askBefore without ${asked.filter((t) => !nested.askBefore!.includes(t)).map((t) => JSON.stringify(t)).join(', ')} (still asked about)`);
        break;
      }
      case 'bash': {
        const { deny, allow } = nested.bash!;
        if (deny && deny.length > 0) out.bash = { ...base.bash, deny: [...(base.bash?.deny ?? []), ...deny] };
        if (allow && allow.length > 0) ignore('bash.allow');
        break;
      }
      case 'permissions': {
        const rules = nested.permissions!;
        const denies = rules.filter((r) => r.decision === 'deny');
        rules.forEach((r, i) => {
          if (r.decision !== 'deny') ignore(`permissions[${i}] (decision "${r.decision}")`);
        });
        if (denies.length > 0) out.permissions = [...denies, ...(base.permissions ?? [])];
        break;
      }
      case 'sandbox': {
        const { mode, network, passEnv, denyRead, allowRead, unixSockets } = nested.sandbox!;
        const sandbox = { ...base.sandbox };
        const current: SandboxMode = base.sandbox?.mode ?? 'workspace-write';
        if (mode !== undefined) {
          if (SANDBOX_STRICTNESS.indexOf(mode) < SANDBOX_STRICTNESS.indexOf(current)) sandbox.mode = mode;
          else if (mode !== current) ignore(`sandbox.mode "${mode}" (wider than "${current}")`);
        }
        if (network === false) sandbox.network = false;
        else if (network === true && base.sandbox?.network !== true) ignore('sandbox.network: true');
        if (passEnv && passEnv.length > 0) ignore('sandbox.passEnv');
        // Hiding more paths narrows; showing one again, or Unix sockets, widens.
        if (denyRead && denyRead.length > 0) sandbox.denyRead = [...(base.sandbox?.denyRead ?? []), ...denyRead];
        if (allowRead && allowRead.length > 0) ignore('sandbox.allowRead');
        if (unixSockets === true) ignore('sandbox.unixSockets: true');
        if (Object.keys(sandbox).length > 0) out.sandbox = sandbox;
        break;
      }
      default:
        ignore(key);
    }
  }
  return { config: out, ignored };
}
