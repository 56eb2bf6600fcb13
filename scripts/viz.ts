/**
 * `npm run viz`: draws every machine of `machineRegistry` into `visualizations/` as Mermaid
 * (`<name>.mmd`) and an ELK-laid-out SVG (`<name>.svg`). Re-running on an unchanged tree
 * rewrites nothing; `test/visualizations/stale.test.ts` fails when a checked-in `.mmd` is stale.
 */
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { machineRegistry } from '../machines/registry.js';
import { writeDiagrams } from './viz/files.js';

const dir = fileURLToPath(new URL('../visualizations/', import.meta.url));
const changed = await writeDiagrams(machineRegistry, dir);
const names = Object.keys(machineRegistry).sort().join(', ');
if (changed.length === 0) {
  console.log(`viz: ${names}: up to date`);
} else {
  for (const path of changed) console.log(`viz: updated ${relative(process.cwd(), path)}`);
}
