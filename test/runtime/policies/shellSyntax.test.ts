/**
 * The shell parser (mvdan-sh, 1.5 MB) is loaded when the first line is parsed, not when the
 * policies are imported (shellSyntax.ts: an ESM import of it costs every `dsh run` a scan of the
 * whole file before its first model request); and where no synchronous `require` exists (a
 * browser, Node before 20.16) it is imported with the module, so parsing works the same. Each
 * case runs in a fresh Node process, where nothing has loaded the parser yet.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const shellCommands = JSON.stringify(fileURLToPath(new URL('../../../src/runtime/policies/shellCommands.ts', import.meta.url)));

function run(prelude: string): { loadedAtImport: boolean; loadedAfterParse: boolean; commands: string[][] } {
  const script = `${prelude}
    const loaded = () => Object.keys(require('node:module')._cache ?? {}).some((k) => k.includes('mvdan-sh'));
    const { parseShellCommand } = await import(${shellCommands});
    const loadedAtImport = loaded();
    const parse = parseShellCommand('nice -n 5 rm -r v && ls');
    console.log(JSON.stringify({ loadedAtImport, loadedAfterParse: loaded(), commands: parse.commands.map((c) => c.layers[c.layers.length - 1].words) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);\n${script}`], { encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ReturnType<typeof run>;
}

describe('the shell parser is loaded when it is first needed', () => {
  it('in Node: importing the policies loads no parser; the first parse does', () => {
    expect(run('')).toEqual({ loadedAtImport: false, loadedAfterParse: true, commands: [['rm', '-r', 'v'], ['ls']] });
  });

  it('without a synchronous require (a browser, an older Node) it comes with the module, and parses the same', () => {
    expect(run('delete process.getBuiltinModule;')).toEqual({ loadedAtImport: true, loadedAfterParse: true, commands: [['rm', '-r', 'v'], ['ls']] });
  });
});
