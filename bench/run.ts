/**
 * `npm run bench` — full run (a few minutes); `npm run bench -- --quick` — under a minute.
 * Options: `--tsx` runs the TypeScript sources through tsx instead of the compiled build (see
 * bench/lib/build.ts for why the build is the default); `--only w1,w6` runs some workloads and
 * leaves bench/results.json alone.
 *
 * Prints a markdown table (stdout) and writes bench/results.json; a full run also refreshes the
 * table in docs/benchmarks.md.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildForBench } from './lib/build.js';
import { bundleCli } from '../scripts/bundleCli.js';

const args = process.argv.slice(2);
const root = dirname(dirname(fileURLToPath(import.meta.url)));

if (args.includes('--tsx')) {
  const { main } = await import('./main.js');
  await main(args);
} else {
  const out = buildForBench(root);
  // The `dsh` command as it ships (dist/cli/): the compiled CLI bundled, for the cold start rows.
  await bundleCli(out);
  const child = spawnSync(process.execPath, ['--expose-gc', join(out, 'bench', 'main.js'), ...args], { stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
}
