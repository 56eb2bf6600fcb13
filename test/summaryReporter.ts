/**
 * Ends `npm test` with one plain line, `N passed, N failed[, N skipped]`, that any CI can read
 * without knowing vitest's own summary format; before it, the model-based path coverage of each
 * machine, as the coverage test at the end of each `test/paths/<name>.paths.test.ts` measured it.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const coverage: string[] = [];
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const counts = t.meta().pathCoverage;
        if (counts) coverage.push(counts);
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but is a failure.
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) failed++;
    }
    if (coverage.length) process.stdout.write(`\nmodel-based path coverage:\n${coverage.sort().join('\n')}\n`);
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
