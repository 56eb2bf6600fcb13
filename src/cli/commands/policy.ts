/**
 * `dsh policy test` and `dsh policy replay` (issue 26 items 2 and 3): the examples the config's
 * rules carry, and what the current policies would have decided about the calls of recorded
 * sessions. Neither runs a tool body.
 */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';
import { FAIL_ON, type FailOn } from '../policy/replay.js';

export const policyCommand: Command = {
  name: 'policy',
  summary: "check the config's policies: their examples, and what they would do to recorded sessions",
  synopsis: 'dsh policy test | dsh policy replay [SESSION…] [--allow TOOL,…] [--plan] [--fail-on WHAT] [--json]',
  details: `dsh policy test
  Checks every example the config's rules carry ("examples": { "allow", "ask", "deny" } on a
  permission rule or a bash pattern) against the config's rules, and prints each that is decided
  otherwise, naming the rule, the example and what decided it instead. (A config whose examples
  fail is refused by every other command too.)
  Exit: 0 every example holds, 1 one fails (or the config cannot be read), 2 bad usage.

dsh policy replay [SESSION…]
  Runs every call recorded in the sessions (IDs of the current directory or JSONL files; default:
  all of .dsh/sessions/) through the current policies: the config's rules, plan mode, the
  preExecute and guard command hooks (they do run, in the sandbox, as configured; postExecute and
  result hooks do not, as no body runs) and the default question before write, edit and bash. No
  tool body runs; a question is shown as "would ask". Prints each call decided otherwise than it
  was then, with the rule or hook that decides now, and a summary table.

  --allow TOOL,…   as dsh run --allow: questions about TOOL are answered yes (then and now the
                   call still counts as asked)
  --plan           replay in plan mode
  --fail-on WHAT   comma-separated: ran-now-denied (a call that ran would now be denied),
                   denied-now-runs (a denied call would now run without a question),
                   any-change; default: ran-now-denied,denied-now-runs
  --json           the report as one JSON document
  -h, --help       this text

  Exit: 0 nothing to fail on, 1 a change it fails on (or a log or the config cannot be read),
  2 bad usage.`,
  options: { allow: { type: 'string' }, plan: { type: 'boolean' }, 'fail-on': { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 10_000, name: 'test|replay' },
  async run({ values, positionals }, io) {
    const [sub, ...rest] = positionals;
    if (sub === 'test') {
      if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(' ')}`, policyCommand);
      for (const flag of ['allow', 'plan', 'fail-on', 'json'] as const) if (values[flag] !== undefined) throw new UsageError(`--${flag} is for dsh policy replay`, policyCommand);
      return policyTest(io);
    }
    if (sub === 'replay') {
      const failOn = parseFailOn(values['fail-on']);
      const allow = typeof values.allow === 'string' ? values.allow.split(',').map((s) => s.trim()).filter(Boolean) : [];
      return policyReplay(rest, { allow, plan: values.plan === true, failOn, json: values.json === true }, io);
    }
    throw new UsageError(`unknown policy subcommand ${JSON.stringify(sub)}; expected "test" or "replay"`, policyCommand);
  },
};

function parseFailOn(v: string | boolean | undefined): FailOn[] {
  if (v === undefined) return ['ran-now-denied', 'denied-now-runs'];
  const list = String(v).split(',').map((s) => s.trim()).filter(Boolean);
  for (const f of list) if (!(FAIL_ON as readonly string[]).includes(f)) throw new UsageError(`--fail-on: unknown ${JSON.stringify(f)}; expected ${FAIL_ON.join(', ')}`, policyCommand);
  if (list.length === 0) throw new UsageError('--fail-on needs at least one of ' + FAIL_ON.join(', '), policyCommand);
  return list as FailOn[];
}

async function policyTest(io: { out(l: string): void; err(l: string): void }): Promise<number> {
  const [{ loadConfig }, { checkConfigExamples }, { describeFailure }] = await Promise.all([
    import('../../config/load.js'),
    import('../../config/examples.js'),
    import('../../runtime/policies/ruleExamples.js'),
  ]);
  const { config, root } = await loadConfig({ cwd: process.cwd(), env: process.env, checkExamples: false });
  const { checked: ruleChecked, failures: ruleFailures } = await checkConfigExamples(config, root);
  for (const f of ruleFailures) io.out(`✗ ${describeFailure(f)}`);
  // The command hooks' examples, each run against the real hook in the sandbox (hookChecks.ts).
  const [{ runHookExamples }, { describeExampleFailure, countHookExamples }] = await Promise.all([import('../../config/hookChecks.js'), import('../../runtime/policies/hookExamples.js')]);
  const hookFailures = await runHookExamples({ config, cwd: root, env: process.env });
  for (const f of hookFailures) io.out(`✗ ${describeExampleFailure(f)}`);
  const checked = ruleChecked + countHookExamples(config);
  const failed = ruleFailures.length + hookFailures.length;
  if (checked === 0) io.out('no examples in the config (add "examples" to a permission rule, a bash pattern or a preExecute/guard hook)');
  else io.out(`${checked - failed} of ${checked} example${checked === 1 ? '' : 's'} hold${failed > 0 ? `; ${failed} fail${failed === 1 ? 's' : ''}` : ''}`);
  return failed > 0 ? 1 : 0;
}

/** Bad lines named one by one on stderr; past these, counted. */
const MAX_BAD_LINES_SHOWN = 100;

async function policyReplay(
  sessions: readonly string[],
  options: { allow: readonly string[]; plan: boolean; failOn: readonly FailOn[]; json: boolean },
  io: { out(l: string): void; err(l: string): void },
): Promise<number> {
  const [{ loadConfig }, { builtinToolNames }, { replayJsonlLog }, { sessionFileOf, listSessionIds, sessionsDir }, { replaySessions }, { configuredPolicies }, replay, { onFile }, { describeProvenance }] =
    await Promise.all([
      import('../../config/load.js'),
      import('../../adapters/tools/builtinTools.js'),
      import('../../adapters/log/jsonlLog.js'),
      import('../run/sessionFiles.js'),
      import('../../testing/replay/replaySessions.js'),
      import('../run/agentSession.js'),
      import('../policy/replay.js'),
      import('../describeError.js'),
      import('../../protocol/describeProvenance.js'),
    ]);
  const cwd = process.cwd();
  const { config, root } = await loadConfig({ cwd, env: process.env });
  const files = sessions.length > 0 ? sessions.map((s) => sessionFileOf(cwd, s)) : listSessionIds(cwd).map((id) => `${sessionsDir(cwd)}/${id}.jsonl`);
  if (files.length === 0) {
    io.out(`no sessions in ${sessionsDir(cwd)}`);
    return 0;
  }
  // The deciding command hooks run as in dsh run (in the sandbox); those after the body do not.
  const [{ createHookRunner }, { createSandbox }] = await Promise.all([import('../../adapters/hooks/hookRunner.js'), import('../../adapters/sandbox/sandbox.js')]);
  const sandbox = createSandbox({ ...(config.sandbox ?? {}), root, env: process.env });
  const hooks = config.hooks ? { ...(config.hooks.preExecute ? { preExecute: config.hooks.preExecute } : {}), ...(config.hooks.guard ? { guard: config.hooks.guard } : {}) } : undefined;
  // Each log is streamed: its calls are checked a read (a few MiB) at a time, so memory stays
  // bounded whatever the log's length (replaySessions); a bad line is named and skipped.
  let badLines = 0;
  const onBadLine = (e: import('../../adapters/log/jsonlReplay.js').JsonlLogError) => {
    if (++badLines <= MAX_BAD_LINES_SHOWN) io.err(`dsh policy replay: ${e.message}${e.code === 'SEQ_GAP' ? '' : '; skipped'}`);
  };
  let report: import('../../testing/replay/replaySessions.js').ReplayReport;
  try {
    report = await replaySessions(
      files.map((file) => ({
        name: file.endsWith('.jsonl') ? file.slice(file.lastIndexOf('/') + 1, -'.jsonl'.length) : file,
        events: (onEvent, drain) =>
          onFile(file, async () => {
            const r = await replayJsonlLog(file, onEvent, { onBadLine, drain });
            if (r.torn) io.err(`dsh policy replay: ${r.torn.message}`);
          }),
      })),
      {
        install: (rt) =>
          configuredPolicies(rt, { allow: options.allow, config: { ...config, hooks }, plan: options.plan, cwd: root, hookRunner: createHookRunner({ root, sandbox }) }),
        readOnlyTools: builtinToolNames().readOnly,
        failOn: options.failOn,
      },
    );
  } finally {
    await sandbox.dispose();
  }
  if (badLines > MAX_BAD_LINES_SHOWN) io.err(`dsh policy replay: ${badLines - MAX_BAD_LINES_SHOWN} more bad lines skipped`);
  for (const p of report.problems) io.err(`dsh policy replay: ${p}`);
  if (options.json) {
    io.out(JSON.stringify({ ...report, failOn: options.failOn, badLines }));
    return report.failing > 0 ? 1 : 0;
  }
  const args = (input: unknown) => {
    const s = typeof input === 'string' ? input : JSON.stringify(input);
    return s.length > 100 ? `${s.slice(0, 99)}…` : s;
  };
  const word = { allow: 'allowed', ask: 'asked', deny: 'denied', invalid: 'invalid' } as const;
  for (const c of report.changes) {
    const then = c.then === 'ask' ? (c.ran ? 'asked (yes)' : 'asked (no)') : word[c.then];
    const now = c.now === 'ask' ? 'would ask' : c.now === 'deny' ? 'denied' : 'would run';
    const by = c.nowDecision ? `: ${describeProvenance(c.nowDecision)}` : c.now === 'allow' ? ' (no rule decides)' : '';
    io.out(`${replay.failsOn(c, options.failOn) ? '✗' : '·'} ${c.session} ${c.callId} ${c.toolName} ${args(c.input)}: then ${then}, now ${now}${by}`);
  }
  const rows = [['THEN → NOW', 'CALLS'], ...Object.entries(report.transitions).map(([t, n]) => [t, String(n)]), ['unchanged', String(report.unchanged)], ['not compared', String(report.skipped)]];
  const w = Math.max(...rows.map((r) => r[0]!.length));
  if (report.omitted > 0) io.out(`… ${report.omitted} more change${report.omitted === 1 ? '' : 's'} (counted below, not listed)`);
  if (report.changes.length > 0) io.out('');
  for (const r of rows) io.out(`${r[0]!.padEnd(w)}  ${r[1]}`);
  const hookCount = (hooks?.preExecute?.length ?? 0) + (hooks?.guard?.length ?? 0);
  const ran = hookCount > 0 ? `no tool body ran, but ${hookCount} command hook${hookCount === 1 ? '' : 's'} (preExecute, guard) ran for each call, in the sandbox, as in dsh run` : 'no tool body ran';
  io.out(`${report.calls} call${report.calls === 1 ? '' : 's'} in ${report.sessions} session${report.sessions === 1 ? '' : 's'} replayed; ${ran}; ${report.failing} change${report.failing === 1 ? '' : 's'} to fail on (--fail-on ${options.failOn.join(',')})`);
  return report.failing > 0 ? 1 : 0;
}
