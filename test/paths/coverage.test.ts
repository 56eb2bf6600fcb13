/**
 * Every machine in `machineRegistry` has its path test file, and that file checks its coverage.
 *
 * The coverage itself is checked at the end of each `<name>.paths.test.ts` (see `pathCoverage.ts`),
 * from the runs its path tests already made: every state node and every transition (event,
 * `always`, `after`, child done/error, with its guard) of the machine must have been observed
 * (XState inspection) in some run, else it fails naming the machine and the state or transition.
 * So a machine added to the registry without a path test file fails here, and a stage added to a
 * machine without a path fails there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { machineRegistry } from '../../machines/registry.js';

const here = fileURLToPath(new URL('.', import.meta.url));

describe('coverage of every registered machine by the generated paths', () => {
  it('every registered machine has a path test file that checks its coverage', () => {
    const missing = Object.keys(machineRegistry).flatMap((name) => {
      const file = `${here}${name}.paths.test.ts`;
      if (!existsSync(file)) return [`${name}: no test/paths/${name}.paths.test.ts`];
      const text = readFileSync(file, 'utf8');
      const ok = text.includes(`new PathCoverage('${name}'`) && text.includes('coverage.defineTest(');
      return ok ? [] : [`${name}: test/paths/${name}.paths.test.ts does not check its coverage (new PathCoverage('${name}') … coverage.defineTest(…))`];
    });
    expect(missing).toEqual([]);
  });
});
