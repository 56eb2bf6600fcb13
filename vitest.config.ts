import { configDefaults, defineConfig } from 'vitest/config';

// Tests that spawn many processes (the CLI as a user runs it; the packed package: a build, an
// install) run after the others, not beside them: on a loaded machine they would otherwise slow
// the others' timers and push them past their timeouts.
const PROCESS_TESTS = ['test/package/**/*.test.ts', 'test/cli/exitCodes.test.ts', 'test/store/workers.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    // A throwaway PostgreSQL for the session store tests (or DSH_TEST_PG_URL's; see the file).
    globalSetup: ['./test/store/pgGlobalSetup.ts'],
    reporters: ['default', './test/summaryReporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...PROCESS_TESTS], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
