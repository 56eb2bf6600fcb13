/**
 * The inspector page's files, all served from this package (no CDN; the page works offline):
 * - the page's ES modules, page/*.ts: compiled to page/*.js in the package (dist/); in a checkout
 *   (tsx, vitest) the .ts source is transpiled on request by esbuild, a devDependency;
 * - the statechart diagrams `npm run viz` draws, visualizations/<machine>.svg at the package root
 *   (shipped in the package), each with its <style> moved into the page's stylesheet (the page's
 *   Content-Security-Policy allows no inline style).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PAGE_CSS } from './pageStyle.js';

export const DIAGRAMS = ['turn', 'step', 'scheduler', 'toolCall'] as const;
export type DiagramName = (typeof DIAGRAMS)[number];

/** The page's module names (page/<name>.js). */
export const PAGE_MODULES = ['main', 'model', 'render', 'timeline'] as const;

const pageDir = new URL('./page/', import.meta.url);

/**
 * Every script the page loads, by its URL path, and the file it is (without extension): the page's
 * own modules under /assets/, and the one module it shares with the machines, the stage names
 * (imported as `../../../../machines/callStageNames.js`, which the browser resolves against
 * /assets/model.js to /machines/callStageNames.js): defined once, in machines/.
 */
const SCRIPTS: ReadonlyMap<string, URL> = new Map([
  ...PAGE_MODULES.map((name) => [`/assets/${name}.js`, new URL(name, pageDir)] as const),
  ['/machines/callStageNames.js', new URL('../../../machines/callStageNames', import.meta.url)],
]);

/** The directory holding dsh's package.json: src/cli/inspect/ in a checkout, dist/src/cli/inspect/ in the package. */
function packageRoot(): URL {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown };
      if (pkg.name === 'dsh') return dir;
    } catch {
      // none here: go on up
    }
    if (new URL('..', dir).href === dir.href) throw new Error('dsh inspect: cannot find the dsh package (its package.json) above this file');
  }
}

const cache = new Map<string, string>();

/** The JavaScript the page loads at URL path `path` (`/assets/main.js`, …), or undefined when there is none. */
export async function pageScript(path: string): Promise<string | undefined> {
  const file = SCRIPTS.get(path);
  if (!file) return undefined;
  const hit = cache.get(path);
  if (hit !== undefined) return hit;
  let js: string;
  try {
    js = await readFile(new URL(`${file.href}.js`), 'utf8');
  } catch {
    // A checkout: the TypeScript source, transpiled (types dropped; `./x.js` imports stay as they are).
    const source = await readFile(new URL(`${file.href}.ts`), 'utf8');
    const { transform } = await import('esbuild');
    js = (await transform(source, { loader: 'ts', format: 'esm', target: 'es2022', sourcefile: path })).code;
  }
  cache.set(path, js);
  return js;
}

interface Diagram {
  svg: string;
  css: string;
}

function diagram(name: DiagramName): Diagram {
  const key = `diagram:${name}`;
  const hit = cache.get(key);
  if (hit !== undefined) return JSON.parse(hit) as Diagram;
  const raw = readFileSync(new URL(`visualizations/${name}.svg`, packageRoot()), 'utf8');
  let css = '';
  const svg = raw.replace(/<style>([\s\S]*?)<\/style>/g, (_, body: string) => {
    css += body;
    return '';
  });
  const d = { svg, css };
  cache.set(key, JSON.stringify(d));
  return d;
}

/** A diagram's SVG without its <style> (see pageStylesheet), or undefined for an unknown name. */
export function diagramSvg(name: string): string | undefined {
  return (DIAGRAMS as readonly string[]).includes(name) ? diagram(name as DiagramName).svg : undefined;
}

/** The page's CSS, then the diagrams' own rules scoped to the diagram panel. */
export function pageStylesheet(): string {
  const rules = new Set<string>();
  for (const name of DIAGRAMS) {
    for (const m of diagram(name).css.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
      const selectors = m[1]!.split(',').map((s) => `.diagram svg ${s.trim()}`).join(', ');
      rules.add(`${selectors} {${m[2]}}`);
    }
  }
  return `${PAGE_CSS}\n/* the diagrams' own styles (visualizations/*.svg) */\n${[...rules].join('\n')}\n`;
}
