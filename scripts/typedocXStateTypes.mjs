// A TypeDoc plugin (typedoc.json "plugin"): XState's generic types (`StateMachine<…>`,
// `ActorRefFrom<…>`, `MachineSnapshot<…>`) carry a machine's whole config object as type
// arguments, and TypeDoc would document every state's `entry` and `invoke.input` as if it were
// API. The reference shows such an argument as `…` and documents the named types (contexts,
// inputs, events, outputs) instead.
import { Converter, IntrinsicType, ReferenceType, ReflectionType, Type } from 'typedoc';

/** Every `ReflectionType` (anonymous object type) inside `type`, not looking into their own members. */
function reflectionsIn(type, found = []) {
  if (type instanceof ReflectionType) {
    found.push(type);
    return found;
  }
  for (const [key, value] of Object.entries(type)) {
    if (key === 'declaration' || key === 'reflection') continue;
    for (const v of Array.isArray(value) ? value : [value]) if (v instanceof Type) reflectionsIn(v, found);
  }
  return found;
}

/** Visits `type` and every type nested in it (not looking into anonymous object types' members). */
function visitTypes(type, visit) {
  if (!(type instanceof Type)) return;
  visit(type);
  if (type instanceof ReflectionType) return;
  for (const [key, value] of Object.entries(type)) {
    if (key === 'declaration' || key === 'reflection') continue;
    for (const v of Array.isArray(value) ? value : [value]) visitTypes(v, visit);
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const project = context.project;
    const elided = [];
    const typesOf = (r) => [r.type, ...(r.signatures ?? []).flatMap((s) => [s.type, ...(s.parameters ?? []).map((p) => p.type)]), r.indexSignatures?.map((s) => s.type)].flat();
    for (const reflection of Object.values(project.reflections)) {
      for (const top of typesOf(reflection)) {
        visitTypes(top, (t) => {
          if (!(t instanceof ReferenceType) || t.package !== 'xstate' || !t.typeArguments) return;
          t.typeArguments = t.typeArguments.map((arg) => {
            const inner = reflectionsIn(arg);
            if (inner.length === 0) return arg;
            elided.push(...inner);
            return new IntrinsicType('…');
          });
        });
      }
    }
    for (const { declaration } of elided) if (project.getReflectionById(declaration.id)) project.removeReflection(declaration);
  });
}
