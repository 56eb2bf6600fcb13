/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): top functions by self time, and self
 * time grouped by package/file, so a profile can be read without DevTools.
 *
 *   node --import tsx bench/profile-summary.ts /tmp/prof/<file>.cpuprofile [top=30]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame lives, short: `xstate`, `zod`, `dsh:machines/scheduler.ts`, `node:internal/...`. */
function area(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = url.match(/\/work\/[^/]+\/(.*)$/);
  if (m) return `dsh:${m[1]}`;
  return url.replace(/^file:\/\//, '').replace(/^node:/, 'node:');
}

export function summarise(profile: Profile, top = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const ar = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const f = n.callFrame;
    const name = `${f.functionName || '(anonymous)'}  ${area(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    const a = f.url ? area(f.url) : f.functionName.startsWith('(') ? f.functionName : '(native)';
    ar.set(a, (ar.get(a) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const lines = [`total sampled ${(total / 1000).toFixed(0)} ms`, '', 'top self time (function  file:line):'];
  for (const [name, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us)}  ${name}`);
  lines.push('', 'self time by area:');
  for (const [name, us] of [...ar].sort((a, b) => b[1] - a[1]).slice(0, 20)) lines.push(`${pct(us)}  ${name}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('profile-summary.ts')) {
  let file = process.argv[2];
  if (!file) throw new Error('usage: profile-summary <file.cpuprofile | dir>');
  if (statSync(file).isDirectory()) {
    const dir = file;
    const newest = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(dir, f))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (!newest) throw new Error(`no .cpuprofile in ${dir}`);
    file = newest;
  }
  console.log(file);
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(process.argv[3] ?? 30)));
}
