/**
 * Issue 32 item 8: a figure quoted in docs/ comes from a generated source, or is not quoted. This
 * test fails when one drifts from its source:
 * - the coverage printout quoted in docs/testing.md: each machine's state and transition totals are
 *   the machine's own (its catalog), all reached (the runs' count is not quoted: it changes);
 * - a bundle size (`N KB` on a line about the bundle or gzip) outside the bench's generated table
 *   is one of the bench's bundle figures (bench/results.json) or a budget;
 * - no test count is quoted ("N tests"): the suite's own summary says it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineRegistry } from '../../machines/registry.js';
import { BUNDLE_BUDGET_BYTES, REACT_BUNDLE_BUDGET_BYTES } from '../../bench/workloads/bundle.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { renderScoreTable, replaceScoreTable } from '../../scripts/mutation/table.js';
import type { MutationScores } from '../../scripts/mutation/parts.js';
import { markdownFiles, repoRoot as root } from './markdownFiles.js';

const read = (p: string) => readFileSync(join(root, p), 'utf8');

describe('figures quoted in the docs', () => {
  it("docs/testing.md's coverage printout: every machine's totals are its own, and all reached", () => {
    const lines = [...read('docs/testing.md').matchAll(/^ {2}(\w+): (\d+)\/(\d+) states, (\d+)\/(\d+) transitions/gm)];
    expect(lines.map((m) => m[1])).toEqual(expect.arrayContaining(['scheduler', 'step', 'toolCall', 'turn', 'turnLifecycle', 'steering']));
    for (const [, name, reached, states, taken, transitions] of lines) {
      const catalog = catalogOf(machineRegistry[name!]!);
      expect([Number(reached), Number(states), Number(taken), Number(transitions)], name).toEqual([catalog.states.length, catalog.states.length, catalog.transitions.length, catalog.transitions.length]);
    }
  });

  it('a bundle size quoted outside the bench table is a figure of the last full bench run, or a budget', () => {
    const results = JSON.parse(read('bench/results.json')) as { bundle: { gzipBytes: number; byPackage: Record<string, number>; react: { gzipBytes: number } } };
    const kb = (bytes: number) => (bytes / 1000).toFixed(1);
    const allowed = new Set([kb(results.bundle.gzipBytes), kb(results.bundle.react.gzipBytes), ...Object.values(results.bundle.byPackage).map(kb), kb(BUNDLE_BUDGET_BYTES), kb(REACT_BUNDLE_BUDGET_BYTES)]);
    const offenders: string[] = [];
    for (const file of markdownFiles()) {
      const text = read(file).replace(/<!-- bench:table:start -->[\s\S]*?<!-- bench:table:end -->/g, '');
      for (const line of text.split('\n')) {
        if (!/bundle|gzip/i.test(line)) continue;
        for (const m of line.matchAll(/(\d+(?:\.\d+)?) KB\b/g)) {
          if (!allowed.has(Number(m[1]).toFixed(1)) && !/re2js|mvdan-sh/.test(line)) offenders.push(`${file}: ${m[0]} in "${line.trim().slice(0, 100)}"`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("docs/testing.md's mutation scores are the table `npm run mutate` renders from docs/mutation-scores.json", () => {
    let scores: MutationScores = { parts: {} };
    try {
      scores = JSON.parse(read('docs/mutation-scores.json')) as MutationScores;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const doc = read('docs/testing.md');
    expect(replaceScoreTable(doc, renderScoreTable(scores))).toBe(doc);
  });

  it('no test count is quoted', () => {
    const offenders = markdownFiles().flatMap((file) => [...read(file).matchAll(/\b\d[\d,]* tests in \d+ files\b|\b\d{3,}[\d,]* tests\b/g)].map((m) => `${file}: ${m[0]}`));
    expect(offenders).toEqual([]);
  });
});
