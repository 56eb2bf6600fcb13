/**
 * Issue 31 item 7 (SPEC §10.6): an `allowed-always` answer to a `bash` call never covers more than
 * was approved. Each case of the issue: approve the first line for always, then the plain
 * `rm -rf victim` (or the `xargs` pipeline) must be asked about again. At the level where the
 * answer is remembered (the runtime's approval stage with the real `bash` approval keys), and with
 * the real `bash` tool for `cd sub && rm -rf victim` (the root's `victim` survives).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { commandApprovalKeys } from '../../../src/runtime/policies/commandRules.js';
import type { AnyTool } from '../../../src/runtime/defineTool.js';
import { call, tempDir } from '../../adapters/workspaceFixture.js';

const askAll: PolicyConfig = { permissions: [{ tool: 'bash', decision: 'ask' }] };

/** A runtime whose approver answers `allowed-always` to the lines in `approve` and denies the rest. */
function session(tool: AnyTool, approve: readonly string[]) {
  const asked: string[] = [];
  const rt = createRuntime({
    tools: [tool],
    approval: {
      request: async ({ args }) => {
        const command = (args as { command: string }).command;
        asked.push(command);
        return approve.includes(command) ? 'allowed-always' : 'denied';
      },
    },
  });
  applyConfig(rt, askAll);
  return { rt, asked };
}

/** A stand-in `bash` with the real tool's approval keys; its body records the lines it ran. */
function recordingBash() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'bash',
    input: z.object({ command: z.string(), timeoutMs: z.number().optional() }),
    approvalKeys: (args) => commandApprovalKeys(args),
    execute: ({ command }) => {
      ran.push(command);
      return 'ran';
    },
  });
  return { tool, ran };
}

describe('allowed-always never covers more than was approved', () => {
  it.each([
    ['true || rm -rf victim'],
    ['if false; then rm -rf victim; fi'],
    ['f() { rm -rf victim; }'],
    ['cleanup() {\n  rm -rf victim\n}\necho defined'],
    ['cd sub && rm -rf victim'],
    ['echo victim | xargs rm -rf'],
    ['find . -name none -exec rm -rf victim \\;'],
    ["sh -c 'false && rm -rf victim'"],
    ['false && rm -rf victim'],
    ['nice -n 5 rm -rf victim'],
  ])('after approving %j for always, a plain `rm -rf victim` is asked about again', async (approved) => {
    const bash = recordingBash();
    const { rt, asked } = session(bash.tool, [approved]);
    expect((await call(rt, 'bash', { command: approved })).isError).toBe(false);
    const plain = await call(rt, 'bash', { command: 'rm -rf victim' });
    expect(plain.error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toEqual([approved, 'rm -rf victim']);
    expect(bash.ran).toEqual([approved]);
    // The approved line itself is remembered: not asked again.
    expect((await call(rt, 'bash', { command: approved })).isError).toBe(false);
    expect(asked).toHaveLength(2);
  });

  it('approving `cat list.txt` and `echo sub/victim | xargs rm -rf` does not cover `cat list.txt | xargs rm -rf`', async () => {
    const bash = recordingBash();
    const approved = ['cat list.txt', 'echo sub/victim | xargs rm -rf'];
    const { rt, asked } = session(bash.tool, approved);
    for (const c of approved) expect((await call(rt, 'bash', { command: c })).isError, c).toBe(false);
    expect((await call(rt, 'bash', { command: 'cat list.txt | xargs rm -rf' })).error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toEqual([...approved, 'cat list.txt | xargs rm -rf']);
    expect(bash.ran).toEqual(approved);
  });

  it('a plain `rm -rf victim` approved does not cover it inside another construct either', async () => {
    const bash = recordingBash();
    const { rt, asked } = session(bash.tool, ['rm -rf victim']);
    expect((await call(rt, 'bash', { command: 'rm -rf victim' })).isError).toBe(false);
    for (const wider of ['cd / && rm -rf victim', 'rm -rf victim; rm -rf other', 'echo victim | xargs rm -rf']) {
      expect((await call(rt, 'bash', { command: wider })).error?.code, wider).toBe('APPROVAL_DENIED');
    }
    expect(asked).toHaveLength(4);
  });

  it('with the real bash tool: after approving `cd sub && rm -rf victim` for always, the root `victim` is not deleted unasked', async () => {
    const root = await tempDir('dsh-remembered-');
    for (const dir of [join(root, 'victim'), join(root, 'sub', 'victim')]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'precious.txt'), 'keep me\n');
    }
    const { rt, asked } = session(createBuiltinTools({ root }).bash as AnyTool, ['cd sub && rm -rf victim']);
    const first = await call(rt, 'bash', { command: 'cd sub && rm -rf victim' });
    expect(first.isError, first.content).toBe(false);
    expect(existsSync(join(root, 'sub', 'victim'))).toBe(false);
    const plain = await call(rt, 'bash', { command: 'rm -rf victim' });
    expect(plain.error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toEqual(['cd sub && rm -rf victim', 'rm -rf victim']);
    expect(existsSync(join(root, 'victim', 'precious.txt'))).toBe(true);
  });
});
