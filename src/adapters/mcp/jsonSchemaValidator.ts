/**
 * JSON Schema validation of what crosses an MCP server boundary (a tool's input, its structured
 * output), with ajv pinned by dsh. The schemas come from the server and the values from the model,
 * so both are hostile: a schema is bounded in size and depth before ajv sees it, `$ref`s are compiled
 * as functions (inlining can grow exponentially), nothing is fetched, and `pattern`s run on RE2
 * (linear time) instead of the JS regex engine. A schema that cannot be compiled is reported.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { jsonSchemaValidator, JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { compileLineMatcher } from '../tools/lineMatcher.js';

/** Bounds on an MCP tool's JSON schemas (the server is not trusted to send small ones). */
export interface SchemaLimits {
  /** Longest schema accepted, in characters of its JSON (default 256 KiB). */
  maxChars: number;
  /** Deepest nesting accepted (default 32). */
  maxDepth: number;
  /**
   * Most nodes the schema may have with every non-recursive `$ref` expanded (default 100,000): a
   * small schema whose refs fan out (each def referring to the previous one twice) would otherwise
   * validate a failing value in exponential time.
   */
  maxExpandedNodes: number;
}
export const defaultSchemaLimits: SchemaLimits = { maxChars: 256 * 1024, maxDepth: 32, maxExpandedNodes: 100_000 };

/** A schema compiled into a check that returns the first few errors as text, or undefined when valid. */
export type ValueCheck = (value: unknown) => string | undefined;

/** Why a schema was refused, or its check. Never throws. */
export type CompiledSchema = { ok: true; check: ValueCheck } | { ok: false; reason: string };

// ajv calls this for every `pattern`/`patternProperties` key; RE2 syntax errors fail the compile.
const re2Engine = Object.assign((pattern: string) => compileLineMatcher(pattern, false), { code: 're2js' });

const ajvOptions = {
  strict: false, // servers write sloppy schemas; unknown keywords are ignored, not fatal
  validateFormats: false,
  inlineRefs: false,
  allErrors: false,
  code: { regExp: re2Engine },
} as const;

function ajvFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12')) return new Ajv2020(ajvOptions);
  if (dialect.includes('2019-09')) return new Ajv2019(ajvOptions);
  return new Ajv(ajvOptions);
}

/** Size and depth of a JSON value, walked without recursion; undefined when within limits. */
export function schemaShapeProblem(schema: unknown, limits: SchemaLimits = defaultSchemaLimits): string | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'the schema is not a JSON object';
  let chars: number;
  try {
    chars = JSON.stringify(schema).length;
  } catch (e) {
    return `the schema is not plain JSON (${describe(e)})`;
  }
  if (chars > limits.maxChars) return `the schema is ${chars} characters, over the limit of ${limits.maxChars}`;
  const stack: Array<[unknown, number]> = [[schema, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limits.maxDepth) return `the schema is nested deeper than ${limits.maxDepth} levels`;
    for (const c of Array.isArray(v) ? v : Object.values(v)) stack.push([c, depth + 1]);
  }
  const root = schema as Record<string, unknown>;
  const expansion = refExpansion(root, limits.maxExpandedNodes);
  if (typeof expansion === 'string') return expansion;
  for (const target of expansion) {
    const problem = recursionFanOutProblem(root, target, limits.maxExpandedNodes);
    if (problem) return problem;
  }
  return undefined;
}

class SchemaProblem extends Error {}

/** The target of a local JSON-pointer `$ref` (`#`, `#/$defs/x`), or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Size of the schema with its `$ref`s expanded (memoized; a ref back into its own expansion counts
 * once: recursion is paid per level of the value). Only local JSON-pointer refs are accepted, so
 * no ref can hide a fan-out from this count.
 */
function refExpansion(root: Record<string, unknown>, limit: number): string | Set<object> {
  const memo = new Map<object, number>();
  const onPath = new Set<object>();
  const recursive = new Set<object>();
  const visit = (node: unknown, depth: number): number => {
    if (node === null || typeof node !== 'object') return 1;
    const known = memo.get(node);
    if (known !== undefined) return known;
    if (onPath.has(node)) {
      recursive.add(node);
      return 1;
    }
    if (depth > 512) throw new SchemaProblem('its $ref chains are longer than 512');
    onPath.add(node);
    let total = 1;
    for (const [key, value] of Object.entries(node)) {
      if ((key === '$dynamicRef' || key === '$recursiveRef') && typeof value === 'string') throw new SchemaProblem(`${key} is not supported`);
      if (key === '$ref' && typeof value === 'string') {
        const target = resolvePointer(root, value);
        if (target === undefined) throw new SchemaProblem(`$ref ${JSON.stringify(value.slice(0, 100))} is not a local JSON pointer to a part of the schema`);
        total += visit(target, depth + 1);
      } else total += visit(value, depth + 1);
      if (total > limit) throw new SchemaProblem(`it expands to over ${limit} nodes through its $refs`);
    }
    onPath.delete(node);
    memo.set(node, total);
    return total;
  };
  try {
    visit(root, 0);
    return recursive;
  } catch (e) {
    if (e instanceof SchemaProblem) return e.message;
    throw e;
  }
}

// Keywords that apply a subschema to a part of the value, by the part they reach: a named
// property, any property, or array elements. Everything else (anyOf, allOf, $ref, if/then, …)
// applies to the same value.
const NAMED_MEMBER = new Set(['properties']);
const ANY_MEMBER = new Set(['patternProperties', 'dependentSchemas']);
const ANY_MEMBER_SCHEMA = new Set(['additionalProperties', 'unevaluatedProperties', 'propertyNames']);
const ELEMENT = new Set(['prefixItems']);
const ELEMENT_SCHEMA = new Set(['items', 'contains', 'additionalItems', 'unevaluatedItems']);
const DATA_KEYS = new Set(['const', 'enum', 'default', 'examples', 'required', '$defs', 'definitions']);

/** Two steps reach a common part: equal, or "any property" against any property step. */
function stepOverlaps(x: string, y: string): boolean {
  if (x === y) return true;
  return (x === '.*' && y.startsWith('.')) || (y === '.*' && x.startsWith('.'));
}
const overlaps = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => stepOverlaps(x, b[i]!));
const MAX_BACK_EDGES = 256;

/**
 * A recursive schema validates a value in time linear in the value unless one value part can meet
 * the same recursion twice (e.g. `anyOf: [{ items: {$ref: '#'} }, { items: {$ref: '#'} }]`), which
 * doubles the work per level of nesting. Refused: two refs back to `target` that reach
 * overlapping parts of the value.
 */
function recursionFanOutProblem(root: Record<string, unknown>, target: object, limit: number): string | undefined {
  const backEdges: string[][] = [];
  let steps = 0;
  const walk = (node: unknown, path: string[], inRefs: Set<object>): void => {
    if (node === null || typeof node !== 'object' || ++steps > limit) return;
    if (Array.isArray(node)) {
      for (const c of node) walk(c, path, inRefs);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYS.has(key)) continue;
      if (key === '$ref' && typeof value === 'string') {
        const t = resolvePointer(root, value);
        if (t === target) backEdges.push(path);
        else if (t !== null && typeof t === 'object' && !inRefs.has(t)) walk(t, path, new Set(inRefs).add(t));
      } else if (NAMED_MEMBER.has(key) && value && typeof value === 'object') {
        for (const [name, sub] of Object.entries(value)) walk(sub, [...path, `.${name}`], inRefs);
      } else if (ANY_MEMBER.has(key) && value && typeof value === 'object') {
        for (const sub of Object.values(value)) walk(sub, [...path, '.*'], inRefs);
      } else if (ANY_MEMBER_SCHEMA.has(key)) walk(value, [...path, '.*'], inRefs);
      else if (ELEMENT.has(key) || ELEMENT_SCHEMA.has(key)) walk(value, [...path, '[]'], inRefs);
      else walk(value, path, inRefs);
    }
  };
  walk(target, [], new Set([target]));
  if (steps > limit) return `its recursive $refs expand to over ${limit} nodes`;
  if (backEdges.length > MAX_BACK_EDGES) return `it has over ${MAX_BACK_EDGES} recursive $refs to one definition`;
  for (let i = 0; i < backEdges.length; i++) {
    for (let j = i + 1; j < backEdges.length; j++) {
      if (overlaps(backEdges[i]!, backEdges[j]!)) {
        return `its recursive $refs reach the same part of a value twice per level (${backEdges[i]!.join('') || '(self)'}), which makes validation exponential`;
      }
    }
  }
  return undefined;
}

/** Compiles a server's schema into a bounded check; a refused or broken schema gives the reason. */
export function compileJsonSchema(schema: unknown, limits: SchemaLimits = defaultSchemaLimits): CompiledSchema {
  const problem = schemaShapeProblem(schema, limits);
  if (problem) return { ok: false, reason: problem };
  // A copy: the server's object stays as it was, and the dialect marker is not a schema to fetch.
  const own = structuredClone(schema) as Record<string, unknown>;
  const ajv = ajvFor(own);
  delete own.$schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(own);
  } catch (e) {
    return { ok: false, reason: `the schema does not compile: ${describe(e)}` };
  }
  return {
    ok: true,
    check: (value) => {
      try {
        if (validate(value)) return undefined;
        return ajv.errorsText(validate.errors?.slice(0, 5), { dataVar: '(input)' });
      } catch (e) {
        return `the value could not be checked: ${describe(e)}`;
      }
    },
  };
}

/**
 * The SDK client's validator of structured output, built on the same bounded compile. A schema it
 * cannot compile gives a check that always fails with the reason (the SDK compiles every tool's
 * output schema while listing tools: throwing there would lose the whole server); `refused` lets
 * the tool source skip those tools.
 */
export function createOutputValidator(limits: SchemaLimits = defaultSchemaLimits): jsonSchemaValidator & { refused: WeakMap<object, string> } {
  const refused = new WeakMap<object, string>();
  return {
    refused,
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const compiled = compileJsonSchema(schema, limits);
      if (!compiled.ok && schema !== null && typeof schema === 'object') refused.set(schema, compiled.reason);
      return (input: unknown) => {
        const error = compiled.ok ? compiled.check(input) : `the output schema is unusable: ${compiled.reason}`;
        return error === undefined ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: error };
      };
    },
  };
}

function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'unknown error';
  }
}
