/** dsh's version, read from its package.json (the nearest one named `dsh` above this file). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  // src/cli/ in a checkout, dist/src/cli/ in the package: walk up rather than count levels.
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'dsh' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here (or not readable): go on up
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}
