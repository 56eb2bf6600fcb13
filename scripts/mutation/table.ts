/**
 * The mutation-score table of docs/testing.md, rendered from docs/mutation-scores.json (written by
 * `npm run mutate`) and placed between its markers.
 */
import { MUTATION_PARTS, type FileScore, type MutationScores } from './parts.js';

export const TABLE_START = '<!-- mutate:table:start -->';
export const TABLE_END = '<!-- mutate:table:end -->';

export function renderScoreTable(scores: MutationScores): string {
  const rows: string[] = [];
  const rooms = [...new Set(Object.values(MUTATION_PARTS).map((p) => p.room))];
  for (const room of rooms) {
    const parts = Object.entries(MUTATION_PARTS).filter(([, p]) => p.room === room);
    const target = parts[0]![1].target;
    for (const [name, part] of parts) {
      const s = scores.parts[name];
      const label = parts.length > 1 ? `${room}: ${name}` : room;
      rows.push(s === undefined ? `| ${label} | ${part.mutate.filter((g) => !g.startsWith('!')).join(', ')} | not run yet | | | | (target ${target} %) |` : row(label, part.mutate, s, target));
    }
    const ran = parts.map(([name]) => scores.parts[name]).filter((s) => s !== undefined);
    if (parts.length > 1 && ran.length === parts.length) {
      const sum = (k: 'tested' | 'killed' | 'survived' | 'noCoverage') => ran.reduce((n, s) => n + s[k], 0);
      const tested = sum('tested');
      rows.push(row(`**${room}, all parts**`, [`${room}/`], { tested, killed: sum('killed'), survived: sum('survived'), noCoverage: sum('noCoverage'), score: tested === 0 ? 100 : Math.floor((sum('killed') / tested) * 1000) / 10 }, target));
    }
  }
  return ['| room (part) | files | mutants tested | killed (or timed out) | survived | reached by no test | score |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

function row(label: string, mutate: readonly string[], s: FileScore, target: number): string {
  return `| ${label} | ${mutate.filter((g) => !g.startsWith('!')).join(', ')} | ${s.tested} | ${s.killed} | ${s.survived} | ${s.noCoverage} | **${s.score.toFixed(1)} %** (target ${target} %) |`;
}

export function replaceScoreTable(doc: string, table: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/testing.md has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${table}\n${doc.slice(end)}`;
}
