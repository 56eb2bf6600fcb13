/** dsh.config.json: found, read, validated (errors name the file and field), merged over the user file. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, mergeConfigs, parseConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { applyConfig, runtimeOptionsFromConfig } from '../../src/runtime/policies/applyConfig.js';
import { tempDir } from '../adapters/workspaceFixture.js';
import { call, fakeBash, recordingApproval } from '../runtime/policies/fixtures.js';

function errorOf(text: string): ConfigError {
  try {
    parseConfig(text, 'dsh.config.json');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config validation', () => {
  it.each([
    [
      { permissions: [{ tool: 'a', decision: 'allow' }, { tool: 'b', decision: 'deny' }, { tool: 'c', decision: 'maybe' }] },
      'dsh.config.json: permissions[2].decision: expected "allow" | "deny" | "ask", got "maybe"',
      'permissions[2].decision',
    ],
    [{ concurrency: 'many' }, 'dsh.config.json: concurrency: expected number, got string', 'concurrency'],
    [{ concurrency: 0 }, 'dsh.config.json: concurrency: expected a number >= 1, got 0', 'concurrency'],
    [{ timeouts: { hookMs: 1, bashSecs: 3 } }, 'dsh.config.json: timeouts.bashSecs: unknown key', 'timeouts.bashSecs'],
    [{ permisions: [] }, 'dsh.config.json: permisions: unknown key', 'permisions'],
    [{ bash: { deny: ['ok', '(?=x)'] } }, 'dsh.config.json: bash.deny[1]: invalid RE2 pattern "(?=x)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`', 'bash.deny[1]'],
    [{ mcpServers: { files: 3 } }, 'dsh.config.json: mcpServers.files: expected a stdio server { command, args?, env?, cwd? } or a Streamable HTTP server { url (http or https), headers? }', 'mcpServers.files'],
    [{ mcpServers: { 'my server': {} } }, 'dsh.config.json: mcpServers["my server"]: invalid key: a server name is letters, digits, "-" and single "_" (no "__", no leading or trailing "_"), at most 64', 'mcpServers["my server"]'],
    [[], 'dsh.config.json: (top level): expected object, got array', '(top level)'],
    [
      { permissions: [{ tool: 'read', path: '!secrets/**', decision: 'allow' }] },
      'dsh.config.json: permissions[0].path: invalid glob "!secrets/**": negated globs are not supported (put a rule with the other decision first)',
      'permissions[0].path',
    ],
    [{ bash: { deny: ['a\n(?=b)'] } }, 'dsh.config.json: bash.deny[0]: invalid RE2 pattern "a\\n(?=b)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`', 'bash.deny[0]'],
  ])('%j → %s', (value, message, field) => {
    const e = errorOf(JSON.stringify(value));
    expect(e.message).toBe(message);
    expect(e.field).toBe(field);
    expect(e.message).not.toContain('\n');
  });

  it('several problems: the first (in schema order) is named, the rest counted', () => {
    expect(errorOf('{"concurrency":"x","plan":"yes"}').message).toBe('dsh.config.json: plan: expected boolean, got string (and 1 more)');
  });

  it('bad JSON is one line naming the file, even when the parser quotes a line break', () => {
    expect(errorOf('{"plan":\n true,,\n}').message).not.toContain('\n');
    const e = errorOf('{"plan": true,,}');
    expect(e.message).toMatch(/^dsh\.config\.json: not valid JSON: /);
    expect(e.field).toBeUndefined();
  });

  it('JSON nested too deeply to validate (an example\'s args 100,000 arrays deep) is a ConfigError in one line, not a stack overflow', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const e = errorOf(`{"permissions":[{"tool":"write","decision":"deny","examples":{"deny":[{"tool":"write","args":{"x":${deep}}}]}}]}`);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toBe('dsh.config.json: nested too deeply to validate');
  });

  it('mcpServers entries are checked with the MCP adapter\'s schema: other agents\' keys are ignored, a bad entry names its field', () => {
    const c = parseConfig(JSON.stringify({ mcpServers: { files: { command: 'npx', args: ['x'], anything: { deep: 1 } } } }), 'f');
    expect(c.mcpServers).toEqual({ files: { command: 'npx', args: ['x'] } });
    expect(() => parseConfig(JSON.stringify({ mcpServers: { web: { url: 'ftp://x' } } }), 'f')).toThrow(/mcpServers\.web/);
    expect(() => parseConfig(JSON.stringify({ mcpServers: { a__b: { command: 'x' } } }), 'f')).toThrow(/a server name is/);
  });
});

describe('loadConfig', () => {
  async function world() {
    const dir = await tempDir();
    const xdg = join(dir, 'xdg');
    const repo = join(dir, 'repo');
    await mkdir(join(xdg, 'dsh'), { recursive: true });
    await mkdir(join(repo, '.git'), { recursive: true });
    await mkdir(join(repo, 'src', 'deep'), { recursive: true });
    return { dir, xdg, repo, env: { XDG_CONFIG_HOME: xdg, HOME: join(dir, 'home') } };
  }

  it('the user file merges under the project file', async () => {
    const { xdg, repo, env } = await world();
    await writeFile(
      join(xdg, 'dsh', 'config.json'),
      JSON.stringify({
        model: 'anthropic:claude-haiku-4-5',
        concurrency: 2,
        timeouts: { hookMs: 1000, approvalMs: 5000 },
        permissions: [{ tool: 'bash', decision: 'ask' }],
        bash: { deny: ['^sudo'] },
        mcpServers: { a: { command: 'user-a' }, b: { command: 'user-b' } },
      }),
    );
    await writeFile(
      join(repo, 'dsh.config.json'),
      JSON.stringify({
        model: 'openai:gpt-5',
        plan: true,
        timeouts: { hookMs: 2000 },
        permissions: [{ tool: 'write', path: 'vendor/**', decision: 'deny' }],
        bash: { deny: ['^git push'] },
        mcpServers: { b: { command: 'project-b' } },
      }),
    );
    const loaded = await loadConfig({ cwd: join(repo, 'src', 'deep'), env });
    expect(loaded.root).toBe(repo);
    expect(loaded.files).toEqual([join(xdg, 'dsh', 'config.json'), join(repo, 'dsh.config.json')]);
    expect(loaded.config).toEqual({
      model: 'openai:gpt-5',
      concurrency: 2,
      plan: true,
      timeouts: { hookMs: 2000, approvalMs: 5000 },
      // Each rule and pattern names the file it came from (a denial names it: issue 32 item 2).
      permissions: [
        { tool: 'write', path: 'vendor/**', decision: 'deny', from: join(repo, 'dsh.config.json') },
        { tool: 'bash', decision: 'ask', from: join(xdg, 'dsh', 'config.json') },
      ],
      bash: { deny: [{ pattern: '^sudo', from: join(xdg, 'dsh', 'config.json') }, { pattern: '^git push', from: join(repo, 'dsh.config.json') }] },
      mcpServers: { a: { command: 'user-a' }, b: { command: 'project-b' } },
    });
    expect(runtimeOptionsFromConfig(loaded.config)).toEqual({ concurrency: 2, limits: { hookTimeoutMs: 2000, approvalTimeoutMs: 5000 } });
  });

  it('context: the window becomes the runtime\'s contextWindow; a window under 1,000 chars or an unknown summariser is an error', () => {
    const config = parseConfig('{"context":{"maxChars":600000,"summarize":"digest"}}', 'dsh.config.json');
    expect(runtimeOptionsFromConfig(config)).toEqual({ contextWindow: { maxChars: 600_000 } });
    expect(errorOf('{"context":{"maxChars":10}}').message).toMatch(/^dsh\.config\.json: context\.maxChars: expected a number >= 1000/);
    expect(errorOf('{"context":{"maxChars":5000,"summarize":"llm"}}').message).toMatch(/^dsh\.config\.json: context\.summarize: /);
  });

  it('an error in the user file names that file; one in the project file names it relative to cwd', async () => {
    const { xdg, repo, env } = await world();
    await writeFile(join(xdg, 'dsh', 'config.json'), '{"maxInlineBytes": -1}');
    await expect(loadConfig({ cwd: repo, env })).rejects.toThrow(`${join(xdg, 'dsh', 'config.json')}: maxInlineBytes: expected a number >= 256, got -1`);
    await writeFile(join(xdg, 'dsh', 'config.json'), '{}');
    await writeFile(join(repo, 'dsh.config.json'), '{"permissions":[{"tool":"x","decision":"allow","paht":"a"}]}');
    await expect(loadConfig({ cwd: repo, env })).rejects.toThrow(/^dsh\.config\.json: permissions\[0\]\.paht: unknown key$/);
  });

  it('no files: an empty config rooted at cwd; outside a repository no parent is searched', async () => {
    const { dir, env } = await world();
    await writeFile(join(dir, 'dsh.config.json'), '{"plan": true}');
    const cwd = join(dir, 'elsewhere');
    await mkdir(cwd);
    expect(await loadConfig({ cwd, env })).toEqual({ config: {}, root: cwd, files: [], ignored: [], narrowing: [], serverOrigins: {} });
  });

  it('XDG_CONFIG_HOME unset: ~/.config/dsh/config.json; an explicit file must exist', async () => {
    const { dir, repo } = await world();
    const home = join(dir, 'home');
    await mkdir(join(home, '.config', 'dsh'), { recursive: true });
    await writeFile(join(home, '.config', 'dsh', 'config.json'), '{"concurrency": 3}');
    expect((await loadConfig({ cwd: repo, env: { HOME: home, XDG_CONFIG_HOME: 'relative/ignored' } })).config).toEqual({ concurrency: 3 });
    await expect(loadConfig({ cwd: repo, env: { HOME: home }, file: 'missing.json' })).rejects.toThrow(/missing\.json: cannot be read: no such file$/);
  });

  it('mergeConfigs: a project cannot drop a user deny pattern', () => {
    expect(mergeConfigs({ bash: { deny: ['a'] } }, { bash: { deny: [] } }).bash).toEqual({ deny: ['a'] });
  });

  it('otel (issue 27): merges by key; only the user file turns recordContent on, a project file can turn it off', () => {
    expect(mergeConfigs({ otel: { endpoint: 'http://127.0.0.1:4318' } }, { otel: { serviceName: 'svc', recordContent: true } }).otel).toEqual({ endpoint: 'http://127.0.0.1:4318', serviceName: 'svc' });
    expect(mergeConfigs({ otel: { recordContent: true } }, { otel: { endpoint: 'http://127.0.0.1:4318' } }).otel).toEqual({ recordContent: true, endpoint: 'http://127.0.0.1:4318' });
    expect(mergeConfigs({ otel: { recordContent: true } }, { otel: { recordContent: false } }).otel).toEqual({});
    expect(() => parseConfig(JSON.stringify({ otel: { endpoint: 'file:///tmp/x' } }), 'dsh.config.json')).toThrow(/otel\.endpoint/);
    expect(() => parseConfig(JSON.stringify({ otel: { headers: { a: 'b' } } }), 'dsh.config.json')).toThrow(/otel/);
  });

  it('end to end: a loaded config denies by bash pattern (before any question: POLICY_DENIED) and asks by rule', async () => {
    const { repo, env } = await world();
    await writeFile(
      join(repo, 'dsh.config.json'),
      JSON.stringify({ permissions: [{ tool: 'bash', decision: 'ask', reason: 'runs a command' }], bash: { deny: ['^rm\\s'] } }),
    );
    const { config, root } = await loadConfig({ cwd: repo, env });
    const bash = fakeBash();
    const { service, asked } = recordingApproval('allowed-once');
    const rt = createRuntime({ tools: [bash.tool], approval: service, ...runtimeOptionsFromConfig(config) });
    applyConfig(rt, config, { root });
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual(['runs a command']);
    const denied = await call(rt, 'bash', { command: 'cd x && rm -r y' });
    expect(denied.error?.code).toBe('POLICY_DENIED');
    expect(bash.ran).toEqual(['ls']);
  });
});

describe('public surface', () => {
  it('dsh exports plan mode and typed hooks; dsh/policies the RE2 policies; dsh/node adds loadConfig', async () => {
    const dsh = await import('../../src/index.js');
    const policies = await import('../../src/policies.js');
    const node = await import('../../src/node.js');
    for (const name of ['planMode', 'normaliseToolPath', 'forTool', 'forToolResult', 'guardFor']) {
      expect(typeof (dsh as Record<string, unknown>)[name], name).toBe('function');
    }
    // The RE2 matchers stay out of `dsh` (its browser bundle budget, test/browser/bundleBudget.test.ts).
    for (const name of ['applyConfig', 'runtimeOptionsFromConfig', 'permissionRules', 'bashDenyGuard', 'compileGlob']) {
      expect(name in dsh, name).toBe(false);
      expect(typeof (policies as Record<string, unknown>)[name], name).toBe('function');
    }
    expect('loadConfig' in dsh).toBe(false);
    for (const name of ['loadConfig', 'parseConfig', 'mergeConfigs', 'ConfigError', 'applyConfig', 'runtimeOptionsFromConfig', 'permissionRules', 'bashDenyGuard', 'planMode']) {
      expect(typeof (node as Record<string, unknown>)[name], name).toBe('function');
    }
    expect(typeof node.DshConfigSchema.safeParse).toBe('function');
  });
});
