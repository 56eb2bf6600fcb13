/**
 * The mutation-score table of docs/testing.md, rendered from docs/mutation-scores.json (written by
 * `npm run mutate`) and placed between its markers.
 */
import { MUTATION_PARTS, type MutationScores } from './parts.js';

export const TABLE_START = '<!-- mutate:table:start -->';
export const TABLE_END = '<!-- mutate:table:end -->';

export function renderScoreTable(scores: MutationScores): string {
  const rows = Object.entries(MUTATION_PARTS).map(([name, part]) => {
    const s = scores.parts[name];
    if (s === undefined) return `| ${name} | ${part.mutate[0]} | not run yet | | | | ${part.target} % |`;
    return `| ${name} | ${part.mutate[0]} | ${s.tested} | ${s.killed} | ${s.survived} | ${s.noCoverage} | **${s.score.toFixed(1)} %** (target ${part.target} %) |`;
  });
  return ['| part | files | mutants tested | killed (or timed out) | survived | reached by no test | score |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

export function replaceScoreTable(doc: string, table: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/testing.md has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${table}\n${doc.slice(end)}`;
}
