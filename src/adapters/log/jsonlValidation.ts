/**
 * Validation of a replayed line's value against `LogEventSchema`: the same verdict and output as
 * `LogEventSchema.safeParse`, and a key the schema would drop is reported, never dropped.
 */
import { LogEventSchema, type LogEvent } from '../../protocol/index.js';

/** Whether a value is a valid event that zod would return unchanged (same keys, same values). */
type FastCheck = (value: unknown) => boolean;

/** The parts of a zod 4 schema definition the fast check reads (`schema._zod.def`). */
interface ZodDef {
  readonly type: string;
  readonly checks?: ReadonlyArray<{ readonly _zod: { readonly def: { readonly check: string; readonly format?: string; readonly value?: unknown; readonly inclusive?: boolean; readonly minimum?: number; readonly maximum?: number } } }>;
  readonly coerce?: boolean;
  readonly shape?: Readonly<Record<string, unknown>>;
  readonly catchall?: unknown;
  readonly innerType?: unknown;
  readonly element?: unknown;
  readonly options?: readonly unknown[];
  readonly values?: readonly unknown[];
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly keyType?: unknown;
  readonly valueType?: unknown;
}

const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def;
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Compiles a zod schema, once, into a plain predicate for the JSON values replay sees: true only
 * when the value is valid *and* zod's output would equal it (no key stripped, nothing coerced or
 * transformed). It knows only the kinds of schema and check the log events use and refuses to
 * compile anything else (undefined). It is a fast path, never the judge: whatever it does not
 * accept goes to the zod schema itself, whose verdict, output and error message stand.
 *
 * The predicate is generated as straight-line code (one function per schema, like zod's own
 * JIT), so every check is a monomorphic inline test; a tree of closures calling one another
 * costs several times as much per event.
 */
function compileFastCheck(schema: unknown): FastCheck | undefined {
  const consts: unknown[] = [];
  let vars = 0;
  // Not an object JSON.parse makes for `{…}` (an array's prototype is Array.prototype).
  const notPlain = (v: string) => `(typeof ${v} !== 'object' || ${v} === null || Object.getPrototypeOf(${v}) !== objectPrototype)`;
  const constant = (value: unknown) => `c[${consts.push(value) - 1}]`;
  const literal = (value: unknown) =>
    typeof value === 'string' || typeof value === 'boolean' || value === null || (typeof value === 'number' && Number.isFinite(value)) ? JSON.stringify(value) : constant(value);

  /** Appends statements that `return false` unless the value in variable `v` passes `schema`. */
  function emit(schema: unknown, v: string, out: string[]): boolean {
    const def = defOf(schema);
    if (def.coerce) return false;
    const tests: string[] = [];
    let minItems = 0;
    let maxItems = Infinity;
    for (const c of def.checks ?? []) {
      const cd = c._zod.def;
      if (def.type === 'number' && cd.check === 'number_format' && cd.format === 'safeint') tests.push(`!Number.isSafeInteger(${v})`);
      else if (def.type === 'number' && (cd.check === 'greater_than' || cd.check === 'less_than') && typeof cd.value === 'number' && Number.isFinite(cd.value)) {
        const op = cd.check === 'greater_than' ? (cd.inclusive ? '>=' : '>') : cd.inclusive ? '<=' : '<';
        tests.push(`!(${v} ${op} ${cd.value})`);
      } else if (def.type === 'array' && cd.check === 'min_length' && typeof cd.minimum === 'number') minItems = Math.max(minItems, cd.minimum);
      else if (def.type === 'array' && cd.check === 'max_length' && typeof cd.maximum === 'number') maxItems = Math.min(maxItems, cd.maximum);
      else return false;
    }
    switch (def.type) {
      case 'string':
      case 'boolean':
        out.push(`if (typeof ${v} !== '${def.type}') return false;`);
        return true;
      case 'unknown':
        return true;
      case 'undefined':
        // Only as an optional key (an ok result's `error?: undefined`): JSON has no undefined.
        out.push(`if (${v} !== undefined) return false;`);
        return true;
      case 'number':
        out.push(`if (typeof ${v} !== 'number' || !Number.isFinite(${v})${tests.map((t) => ` || ${t}`).join('')}) return false;`);
        return true;
      case 'literal': {
        const values = def.values ?? [];
        out.push(values.length === 1 ? `if (${v} !== ${literal(values[0])}) return false;` : `if (!${constant(values)}.includes(${v})) return false;`);
        return true;
      }
      case 'enum':
        out.push(`if (!${constant(new Set(Object.values(def.entries ?? {})))}.has(${v})) return false;`);
        return true;
      case 'optional': {
        // Absent keys are the object's business (JSON has no `undefined`).
        const inner: string[] = [];
        if (!emit(def.innerType, v, inner)) return false;
        if (inner.length) out.push(`if (${v} !== undefined) {`, ...inner, '}');
        return true;
      }
      case 'array': {
        const i = `i${vars++}`;
        const e = `v${vars++}`;
        const inner: string[] = [];
        if (!emit(def.element, e, inner)) return false;
        out.push(`if (!Array.isArray(${v}) || ${v}.length < ${minItems}${maxItems < Infinity ? ` || ${v}.length > ${maxItems}` : ''}) return false;`);
        if (inner.length) out.push(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`, `const ${e} = ${v}[${i}];`, ...inner, '}');
        return true;
      }
      case 'record': {
        const keyDef = defOf(def.keyType);
        if (keyDef.type !== 'string' || keyDef.checks?.length || keyDef.coerce) return false;
        const k = `k${vars++}`;
        const e = `v${vars++}`;
        const inner: string[] = [];
        if (!emit(def.valueType, e, inner)) return false;
        // zod builds its output by assignment, where a `__proto__` key would not survive.
        out.push(`if (${notPlain(v)} || hasOwn.call(${v}, '__proto__')) return false;`);
        if (inner.length) out.push(`for (const ${k} in ${v}) {`, `const ${e} = ${v}[${k}];`, ...inner, '}');
        return true;
      }
      case 'union': {
        const options = (def.options ?? []).map((o) => compileFastCheck(o));
        if (options.length === 0 || options.some((o) => !o)) return false;
        out.push(`if (!(${options.map((o) => `${constant(o)}(${v})`).join(' || ')})) return false;`);
        return true;
      }
      case 'object': {
        if (def.catchall !== undefined) return false;
        const present = `n${vars++}`;
        out.push(`if (${notPlain(v)}) return false;`, `let ${present} = 0;`);
        for (const [key, field] of Object.entries(def.shape ?? {})) {
          const f = `v${vars++}`;
          const k = JSON.stringify(key);
          // zod's own notion of an optional key (a bare `z.unknown()` key is required in zod 4).
          const optional = (field as { _zod: { optin?: string } })._zod.optin === 'optional';
          const inner: string[] = [];
          if (!emit(field, f, inner)) return false;
          // A key Object.prototype also has would be read from it when absent: left to zod.
          if (key in Object.prototype) return false;
          out.push(`const ${f} = ${v}[${k}];`);
          if (optional) out.push(`if (${f} !== undefined) {`, `${present}++;`, ...inner, '}');
          else out.push(`if (${f} === undefined) return false;`, `${present}++;`, ...inner);
        }
        // A key the schema does not know would be stripped: zod's output is not the value.
        const keys = `n${vars++}`;
        const k = `k${vars++}`;
        out.push(`let ${keys} = 0;`, `for (const ${k} in ${v}) ${keys}++;`, `if (${keys} !== ${present}) return false;`);
        return true;
      }
      default:
        return false;
    }
  }

  const body: string[] = [];
  if (!emit(schema, 'v', body)) return undefined;
  let make: (c: unknown[], objectPrototype: object, hasOwn: (this: unknown, key: PropertyKey) => boolean) => FastCheck;
  try {
    make = new Function('c', 'objectPrototype', 'hasOwn', `return function fastCheck(v) {\n${body.join('\n')}\nreturn true;\n};`) as typeof make;
  } catch {
    return undefined; // code generation disallowed (--disallow-code-generation-from-strings): zod decides
  }
  return make(consts, Object.prototype, hasOwn);
}

/** Fast checks of the log's event types, by `type` (none: that type always goes to zod); compiled on first use. */
let fastChecks: ReadonlyMap<unknown, FastCheck | undefined> | undefined;
const compileFastChecks = () =>
  new Map(
    LogEventSchema.options.map((option) => {
      const values = defOf(defOf(option).shape?.type).values ?? [];
      return [values.length === 1 ? values[0] : Symbol('unmatched'), compileFastCheck(option)] as const;
    }),
  );

/**
 * Validates one parsed line against `LogEventSchema`, with the same verdict and output as
 * `LogEventSchema.safeParse`: the compiled fast check when it accepts the value (zod's output
 * would then equal the value, which is returned as it is), otherwise zod itself.
 */
export function validateLogEvent(value: unknown): { success: true; data: LogEvent } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } } {
  return fastAccepts(value) ? { success: true, data: value } : LogEventSchema.safeParse(value);
}

/** Whether the compiled fast check of the value's event type accepts it as it is. */
export function fastAccepts(value: unknown): value is LogEvent {
  if (typeof value !== 'object' || value === null) return false;
  const fast = (fastChecks ??= compileFastChecks()).get((value as { type?: unknown }).type);
  return fast !== undefined && fast(value);
}

/**
 * Where zod's output differs from the parsed line, described for an error message (undefined
 * when it does not): the log's schemas have no defaults or transforms, so in practice a key zod
 * dropped because the schema does not know it (an own `__proto__` key included).
 */
export function firstChange(input: unknown, output: unknown, path: string): string | undefined {
  if (input === output) return undefined;
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (typeof input !== 'object' || input === null || typeof output !== 'object' || output === null) {
    return Object.is(input, output) ? undefined : `${path || '(root)'}: the schema would change this value (it is reported, not changed)`;
  }
  if (Array.isArray(input) !== Array.isArray(output)) return `${path || '(root)'}: the schema would change this value (it is reported, not changed)`;
  if (Array.isArray(input)) {
    const out = output as unknown[];
    if (out.length !== input.length) return `${path || '(root)'}: the schema would change this array (it is reported, not changed)`;
    for (let i = 0; i < input.length; i++) {
      const d = firstChange(input[i], out[i], at(i));
      if (d !== undefined) return d;
    }
    return undefined;
  }
  const inObj = input as Record<string, unknown>;
  const outObj = output as Record<string, unknown>;
  for (const key of Object.keys(inObj)) {
    if (!hasOwn.call(outObj, key)) return `${at(key)}: unknown key ${JSON.stringify(key)} (it is reported, not dropped)`;
    const d = firstChange(inObj[key], outObj[key], at(key));
    if (d !== undefined) return d;
  }
  for (const key of Object.keys(outObj)) {
    if (!hasOwn.call(inObj, key)) return `${at(key)}: missing, and the schema would add it (it is reported, not added)`;
  }
  return undefined;
}

/**
 * The event a replayed line's value is, or why it is not one (for an `INVALID_EVENT` error):
 * zod's first issue, or the first key zod would drop or change.
 */
export function checkLogEvent(value: unknown): { ok: true; event: LogEvent } | { ok: false; detail: string } {
  if (fastAccepts(value)) return { ok: true, event: value };
  const parsed = LogEventSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, detail: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
  }
  // zod drops keys it does not know (`__proto__` included): the line is reported instead.
  const changed = firstChange(value, parsed.data, '');
  return changed === undefined ? { ok: true, event: parsed.data } : { ok: false, detail: changed };
}
