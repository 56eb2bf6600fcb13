/** Whether a value and everything reachable from it is frozen (SPEC §2: a body gets frozen arguments). Cycles are followed once. */
export function isFrozenDeep(value: unknown, seen = new Set<object>()): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return true;
  if (seen.has(value)) return true;
  seen.add(value);
  if (!Object.isFrozen(value)) return false;
  return Reflect.ownKeys(value).every((k) => isFrozenDeep((value as Record<PropertyKey, unknown>)[k], seen));
}
