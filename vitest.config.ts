import { configDefaults, defineConfig } from 'vitest/config';

// Tests that spawn many processes (the CLI as a user runs it; the packed package: a build, an
// install; the browser tests: Vite builds, Chromium) run after the others, not beside them: on a loaded machine they would otherwise slow
// the others' timers and push them past their timeouts.
const PROCESS_TESTS = ['test/package/**/*.test.ts', 'test/cli/exitCodes.test.ts', 'test/browser/reactApp.test.ts', 'test/browser/bundleBudget.test.ts', 'test/inspect/browser/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    reporters: ['default', './test/summaryReporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...PROCESS_TESTS], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
