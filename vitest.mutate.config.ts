import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs against each mutant (`npm run mutate`, scripts/mutate.ts): the in-process
 * tests of the core rooms. No process, browser or Postgres test: a mutant is judged by tests that
 * run in a few seconds, and those slower tests pin the same behaviour through the CLI.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    include: [
      'test/machines/**/*.test.ts',
      'test/paths/**/*.test.ts',
      'test/runtime/**/*.test.ts',
      'test/view/**/*.test.ts',
      'test/react/**/*.test.ts',
      'test/inspection/**/*.test.ts',
      'test/protocol/**/*.test.ts',
      'test/cli/policyReplayStream.test.ts',
      'test/cli/policyReplayTally.test.ts',
      'test/model/modelCallOptions.test.ts',
      // the attacks that run in the test's own process (no bash, no sandbox, no terminal)
      'test/security/deepFreeze.test.ts',
      'test/security/deepNesting.test.ts',
      'test/security/globSymlink.test.ts',
      'test/security/hostileThrows.test.ts',
      'test/security/logBitFlip.test.ts',
      'test/security/regexDos.test.ts',
    ],
    exclude: [...configDefaults.exclude],
  },
});
