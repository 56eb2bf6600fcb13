/**
 * `npm run mutate`: mutation testing of the core rooms with Stryker (its vitest runner, the
 * in-process tests of vitest.mutate.config.ts). Each room is a named part that fits 2 cores in about
 * half an hour; every part keeps an incremental file, so a second run re-tests only the mutants whose
 * code or covering tests changed.
 *
 *   npm run mutate                       every part
 *   npm run mutate -- machines-step view  the named parts (a room's name: all its parts)
 *   npm run mutate -- --changed          the parts a change touches (against HEAD, untracked included)
 *
 * Reports (HTML, JSON, the incremental file) go to reports/mutation/<part>/ (ignored by git). A
 * part that ran whole writes its per-file scores into docs/mutation-scores.json, and the table in
 * docs/testing.md is regenerated from that file (test/docs/quotedFigures.test.ts keeps them equal).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stryker } from '@stryker-mutator/core';
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core';
import { MUTATION_PARTS, partOf, scoreOf, type MutationScores, type PartScore } from './mutation/parts.js';
import { renderScoreTable, replaceScoreTable } from './mutation/table.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const scoresFile = join(root, 'docs', 'mutation-scores.json');
const testingDoc = join(root, 'docs', 'testing.md');

function changedParts(): string[] {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const files = [...git('diff', '--name-only', 'HEAD'), ...git('ls-files', '--others', '--exclude-standard')];
  return [...new Set(files.map(partOf).filter((p): p is string => p !== undefined))];
}

function partsToRun(argv: readonly string[]): string[] {
  if (argv.includes('--changed')) return changedParts();
  // A name is a part, or a room (every part of it).
  const named = argv.filter((a) => !a.startsWith('-'));
  const partsNamed = (n: string) => (n in MUTATION_PARTS ? [n] : Object.keys(MUTATION_PARTS).filter((p) => MUTATION_PARTS[p]!.room === n));
  const unknown = named.filter((n) => partsNamed(n).length === 0);
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${Object.keys(MUTATION_PARTS).join(', ')}`);
  return named.length > 0 ? [...new Set(named.flatMap(partsNamed))] : Object.keys(MUTATION_PARTS);
}

function optionsFor(part: string): PartialStrykerOptions {
  const dir = join('reports', 'mutation', part);
  return {
    testRunner: 'vitest',
    plugins: ['@stryker-mutator/vitest-runner'],
    vitest: { configFile: 'vitest.mutate.config.ts', related: true },
    coverageAnalysis: 'perTest',
    ignoreStatic: true,
    mutate: [...MUTATION_PARTS[part]!.mutate],
    concurrency: Math.max(1, Math.min(2, availableParallelism())),
    incremental: true,
    incrementalFile: join(dir, 'incremental.json'),
    reporters: ['html', 'json', 'progress'],
    htmlReporter: { fileName: join(dir, 'index.html') },
    jsonReporter: { fileName: join(dir, 'mutation.json') },
    tempDirName: join('reports', '.stryker-tmp'),
    ignorePatterns: ['dist', 'test-artifacts', 'reports', 'docs/api', 'visualizations', 'examples/*/node_modules', 'examples/*/dist'],
    timeoutMS: 10_000,
    cleanTempDir: 'always',
  };
}

function readScores(): MutationScores {
  return existsSync(scoresFile) ? (JSON.parse(readFileSync(scoresFile, 'utf8')) as MutationScores) : { parts: {} };
}

const parts = partsToRun(process.argv.slice(2));
if (parts.length === 0) console.log('mutate: no core-room file changed');
for (const part of parts) {
  console.log(`mutate: ${part} (${MUTATION_PARTS[part]!.mutate.join(' ')})`);
  mkdirSync(join(root, 'reports', 'mutation', part), { recursive: true });
  const started = Date.now();
  const results: MutantResult[] = await new Stryker(optionsFor(part)).runMutationTest();
  const score: PartScore = { ...scoreOf(results), minutes: Math.round((Date.now() - started) / 60_000) };
  const scores = readScores();
  scores.parts[part] = score;
  writeFileSync(scoresFile, `${JSON.stringify(scores, null, 2)}\n`);
  writeFileSync(testingDoc, replaceScoreTable(readFileSync(testingDoc, 'utf8'), renderScoreTable(scores)));
  console.log(`mutate: ${part}: ${score.score.toFixed(1)} % of ${score.tested} mutants killed (${score.survived} survived, ${score.noCoverage} reached by no test)`);
}
