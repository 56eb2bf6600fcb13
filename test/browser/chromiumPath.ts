/** Debian's chromium for the example apps' browser tests: its real binary, else the wrapper on PATH (DSH_CHROMIUM overrides). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function chromiumPath(): string | undefined {
  for (const p of [process.env.DSH_CHROMIUM, '/usr/lib/chromium/chromium']) if (p && existsSync(p)) return p;
  const which = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() || undefined : undefined;
}
