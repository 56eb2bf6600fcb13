import { ErrorCode } from '../protocol/index.js';
import type { AnyTool } from './defineTool.js';
import { ToolError } from './toolError.js';

/** Bounds on a call's raw arguments: larger or deeper input is `INVALID_ARGS` before it is parsed further. */
export interface ArgLimits {
  /** Largest raw argument text accepted, in UTF-16 code units (default 1 MiB). */
  maxArgsChars: number;
  /** Deepest nesting of objects/arrays accepted (default 64). */
  maxArgsDepth: number;
}
/** The default argument bounds: 1 Mi characters, 64 levels of nesting. */
export const defaultArgLimits: ArgLimits = { maxArgsChars: 1 << 20, maxArgsDepth: 64 };

/**
 * Turns the model's raw input into validated, deep-frozen args, or throws an `INVALID_ARGS`
 * ToolError. Size and depth are checked iteratively before zod sees the value, so hostile input
 * fails with a clear code rather than a stack overflow; `__proto__`-like keys stay plain data.
 */
export function parseArgs(tool: AnyTool, input: unknown, limits: ArgLimits): unknown {
  let raw: unknown = input;
  if (typeof input === 'string') {
    if (input.length > limits.maxArgsChars) {
      throw new ToolError(ErrorCode.INVALID_ARGS, `arguments are ${input.length} chars, over the limit of ${limits.maxArgsChars}`);
    }
    const read = readBoundedJson(input, limits);
    if (!read.ok) throw new ToolError(ErrorCode.INVALID_ARGS, read.reason);
    raw = read.value;
  }
  checkShape(raw, limits);
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new ToolError(ErrorCode.INVALID_ARGS, `arguments do not match the schema of "${tool.name}": ${issues}`);
  }
  return deepFreeze(parsed.data);
}

/** The outcome of reading raw model JSON within the argument limits. */
export type BoundedJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * Parses the model's raw argument text within `limits` (size, then nesting depth, checked by a
 * linear scan of the text before `JSON.parse` builds anything), never throwing. Every reader of raw
 * model JSON goes through here (validation, the prompt projection, compaction's measure), so a
 * value that was rejected once can never overflow the stack of a later reader. Blank text is `{}`.
 */
export function readBoundedJson(text: string, limits: ArgLimits = defaultArgLimits): BoundedJson {
  if (text.length > limits.maxArgsChars) return { ok: false, reason: `arguments are ${text.length} chars, over the limit of ${limits.maxArgsChars}` };
  if (text.trim() === '') return { ok: true, value: {} };
  if (jsonDepth(text, limits.maxArgsDepth) > limits.maxArgsDepth) {
    return { ok: false, reason: `arguments are nested deeper than ${limits.maxArgsDepth} levels` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, reason: `arguments are not valid JSON: ${e instanceof Error ? e.message : 'parse error'}` };
  }
}

/** Deepest bracket nesting in JSON text (strings skipped), counting no further than `stopAbove + 1`. */
function jsonDepth(text: string, stopAbove: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max && (max = depth) > stopAbove) return max;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return max;
}

/**
 * True when an already-parsed value stays within `limits` (depth and node count), checked without
 * recursion; a value that fails must not be handed to anything recursive (JSON.stringify, zod).
 */
export function withinLimits(value: unknown, limits: ArgLimits = defaultArgLimits): boolean {
  try {
    checkShape(value, limits);
    return true;
  } catch {
    return false;
  }
}

/**
 * Depth and size walk with an explicit stack; also rejects values JSON cannot carry. Only objects
 * are pushed (a primitive has no depth or size to check), on two parallel stacks: no pair per node.
 */
function checkShape(value: unknown, limits: ArgLimits): void {
  if (value === null || typeof value !== 'object') return;
  const values: object[] = [value];
  const depths: number[] = [0];
  let nodes = 0;
  while (values.length) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth >= limits.maxArgsDepth) {
      throw new ToolError(ErrorCode.INVALID_ARGS, `arguments are nested deeper than ${limits.maxArgsDepth} levels`);
    }
    if (++nodes > limits.maxArgsChars) throw new ToolError(ErrorCode.INVALID_ARGS, 'arguments are too large');
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) {
      if (c !== null && typeof c === 'object') {
        values.push(c);
        depths.push(depth + 1);
      }
    }
  }
}

// What may be frozen, as immer decides it (dsh used three of immer's helpers and no longer ships
// immer for them): plain objects, arrays, Maps, Sets and classes marked `[immerable]`; an immer
// draft is left as it is while it lasts. Anything else (a class instance, a typed array, a Date)
// is neither frozen nor walked.
const DRAFT_STATE = Symbol.for('immer-state');
const DRAFTABLE = Symbol.for('immer-draftable');
const objectCtorString = Object.toString();

/** Constructors already asked whether they are another realm's `Object` (their source text is read once). */
const objectLike = new WeakMap<object, boolean>();

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return true;
  const ctor: unknown = Object.hasOwn(proto as object, 'constructor') && (proto as { constructor: unknown }).constructor;
  if (ctor === Object) return true;
  if (typeof ctor !== 'function') return false;
  // An object made in another realm (an iframe, a vm context) has that realm's `Object`.
  let like = objectLike.get(ctor);
  if (like === undefined) objectLike.set(ctor, (like = Function.prototype.toString.call(ctor) === objectCtorString));
  return like;
}

function isFreezable(v: object): boolean {
  if (Array.isArray(v) || isPlainObject(v) || v instanceof Map || v instanceof Set) return true;
  const marked = v as { [DRAFTABLE]?: unknown; constructor?: { [DRAFTABLE]?: unknown } };
  return !!marked[DRAFTABLE] || !!marked.constructor?.[DRAFTABLE];
}

const isDraft = (v: object): boolean => !!(v as { [DRAFT_STATE]?: unknown })[DRAFT_STATE];

/** A frozen Map or Set also refuses its mutators (Object.freeze alone leaves `set`/`add` working). */
const refuse = {
  value: function frozenCollection(): never {
    throw new TypeError('This object has been frozen and should not be mutated');
  },
};
function freezeCollection(c: Map<unknown, unknown> | Set<unknown>): void {
  Object.defineProperties(c, { set: refuse, add: refuse, clear: refuse, delete: refuse });
  Object.freeze(c);
}

/**
 * Freezes a value and everything reachable from it (plain objects, arrays, Maps, Sets), without
 * recursion, so a deep value cannot overflow the stack. Unlike immer's deep `freeze`, an object
 * that is already frozen is still walked: a shallowly frozen input cannot hide mutable insides.
 */
export function deepFreeze<T>(value: T): T {
  // Only objects are pushed: a primitive has nothing to freeze (and a lone one needs no walk at all).
  if (value === null || typeof value !== 'object') return value;
  const stack: object[] = [value];
  // Made when the first child is pushed (a value without object children needs none): holds the root then.
  let seen: Set<object> | undefined;
  const push = (x: unknown) => {
    if (x === null || typeof x !== 'object') return;
    seen ??= new Set<object>([value]);
    stack.push(x);
  };
  while (stack.length) {
    const v = stack.pop()!;
    if (seen?.has(v) || !isFreezable(v)) continue;
    seen?.add(v);
    // An immer draft is left as it is; a Map or Set also gets its mutators replaced; the rest is frozen.
    if (!Object.isFrozen(v) && !isDraft(v)) {
      if (v instanceof Map || v instanceof Set) freezeCollection(v);
      else Object.freeze(v);
    }
    if (v instanceof Map) {
      for (const [k, x] of v) {
        push(k);
        push(x);
      }
    } else if (v instanceof Set) {
      for (const x of v) push(x);
    } else {
      for (const key of Reflect.ownKeys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, key);
        if (d && 'value' in d) push(d.value);
      }
    }
  }
  return value;
}
