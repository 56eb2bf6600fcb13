import { configDefaults, defineConfig } from 'vitest/config';

// Tests that spawn many processes (the CLI as a user runs it; the packed package: a build, an
// install; the browser tests: Vite builds, Chromium; dsh worker processes on Postgres) run after the
// others, not beside them: on a loaded machine they would otherwise slow the others' timers and push
// them past their timeouts. The tests that drive dsh on a real terminal (tmux) are among them: a
// screen that a loaded machine draws late is still drawn, but no budget should be shared with the
// rest of the suite.
const TERMINAL_TESTS = ['test/cli/*Tty.test.ts', 'test/security/terminalInjection.test.ts'];
const PROCESS_TESTS = [...TERMINAL_TESTS, 'test/package/**/*.test.ts', 'test/cli/exitCodes.test.ts', 'test/browser/reactApp.test.ts', 'test/browser/webApp.test.ts', 'test/browser/bundleBudget.test.ts', 'test/inspect/browser/**/*.test.ts', 'test/store/workers.test.ts', 'test/store/workerFaults.test.ts'];
// The session store tests (test/store/workers.test.ts among the process tests) run on a real
// PostgreSQL: their projects start a throwaway one (or use DSH_TEST_PG_URL's; see
// test/store/pgGlobalSetup.ts), only when one of their files runs.
const STORE_TESTS = ['test/store/**/*.test.ts'];
const PG = ['./test/store/pgGlobalSetup.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    reporters: ['default', './test/summaryReporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...PROCESS_TESTS, ...STORE_TESTS], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'store', include: STORE_TESTS, exclude: [...configDefaults.exclude, ...PROCESS_TESTS], globalSetup: PG, sequence: { groupOrder: 0 } } },
      // The example of testing one's own agent with dsh/testing, importing `dsh` as an app does.
      {
        extends: true,
        resolve: { alias: { 'dsh/testing': new URL('./src/testing/index.ts', import.meta.url).pathname, dsh: new URL('./src/index.ts', import.meta.url).pathname } },
        test: { name: 'examples', include: ['examples/testing/**/*.test.ts'], sequence: { groupOrder: 0 } },
      },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, globalSetup: PG, sequence: { groupOrder: 1 } } },
    ],
  },
});
