/** The example workspace `dsh run --demo` (`npm start`) works in: a fresh throwaway copy in the temp directory. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const DEMO_FILES: Readonly<Record<string, string>> = {
  'README.md': '# greeter\n\nA tiny example project for the dsh demo.\n\nRun it with `node src/greet.js NAME`.\n',
  'src/greet.js': "// TODO: greet more than one name\nconst name = process.argv[2] ?? 'world';\nconsole.log(`hello, ${name}`);\n",
  'notes.txt': 'FIXME: add tests\n',
};

/** Creates a new copy of the example workspace; returns its directory. */
export function createDemoWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-demo-'));
  for (const [path, text] of Object.entries(DEMO_FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
