/**
 * A machine's state value as the path of its active states: `'guard'` → `['guard']`,
 * `{ executing: 'running' }` → `['executing', 'running']`; for parallel states, the first region.
 * Views name states from it (the terminal's stage, the inspector's diagram state, a UI's row).
 */
export function stateValuePath(value: unknown): string[] {
  const path: string[] = [];
  let v = value;
  while (v && typeof v === 'object') {
    const first = Object.entries(v as Record<string, unknown>)[0];
    if (!first) break;
    path.push(first[0]);
    v = first[1];
  }
  if (typeof v === 'string') path.push(v);
  return path;
}
