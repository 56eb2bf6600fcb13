import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    reporters: ['default', './test/summaryReporter.ts'],
    // The packed-package test (a build, an install, several processes) runs after the others, not
    // beside them: on a loaded machine it would otherwise slow their timers and timeouts.
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/package/**'], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'package', include: ['test/package/**/*.test.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
