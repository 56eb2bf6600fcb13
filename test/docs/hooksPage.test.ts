// docs/hooks.md shows a complete hook in sh and its config: both are run here as the page says
// (the script under .dsh/hooks/, the config parsed as dsh.config.json), so the page cannot rot.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookRunner } from '../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { createSandbox } from '../../src/adapters/sandbox/sandbox.js';
import { parseConfig } from '../../src/config/load.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { applyConfig } from '../../src/runtime/policies/applyConfig.js';
import { checkHookExamples } from '../../src/runtime/policies/hookExamples.js';
import { call, fakeBash } from '../runtime/policies/fixtures.js';
import { repoRoot } from './markdownFiles.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;

const page = readFileSync(join(repoRoot, 'docs', 'hooks.md'), 'utf8');
const block = (lang: string) => {
  const m = new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'm').exec(page);
  if (!m) throw new Error(`docs/hooks.md has no ${lang} block`);
  return m[1]!;
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(skip)('the sh hook of docs/hooks.md', () => {
  it('meets the examples of its config, and denies a force push as the page says', async () => {
    const root = mkdtempSync(join('/var/tmp', 'dsh-hookdoc-'));
    dirs.push(root);
    mkdirSync(join(root, '.dsh', 'hooks'), { recursive: true });
    const script = join(root, '.dsh', 'hooks', 'no-force-push.sh');
    writeFileSync(script, block('sh'));
    chmodSync(script, 0o755);
    const config = parseConfig(block('json'), 'dsh.config.json');
    const hookRunner = createHookRunner({ root, sandbox: createSandbox({ root }) });
    expect(await checkHookExamples(config, hookRunner, root)).toEqual([]);

    const bash = fakeBash();
    const rt = createRuntime({ tools: [bash.tool] });
    applyConfig(rt, { ...config, permissions: [{ tool: 'bash', decision: 'allow' }] }, { root, hookRunner });
    const denied = await call(rt, 'bash', { command: 'git push --force origin main' });
    expect(denied.error?.code).toBe('GUARD_DENIED');
    expect(denied.content).toContain('force-pushing is not allowed in this repository; push a new branch instead (guard hook hooks.guard[0] (.dsh/hooks/no-force-push.sh))');
    expect(page).toContain('`force-pushing is not allowed in this repository; push a new branch instead (guard hook\nhooks.guard[0] (.dsh/hooks/no-force-push.sh))`');
    expect((await call(rt, 'bash', { command: 'git push origin feature' })).isError).toBe(false);
    expect(bash.ran).toEqual(['git push origin feature']);
  }, 60_000);
});
