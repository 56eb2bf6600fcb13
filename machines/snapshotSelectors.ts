/**
 * Typed readers of the snapshots that inspection hands an observer (`inspect`, `@xstate.snapshot`):
 * which of dsh's actors a snapshot belongs to, and what it is about, without a reader casting to a
 * shape of its own. A snapshot of any other actor (or not a snapshot at all) gives `undefined`.
 * Browser-safe; reads only.
 */
import type { StateValue } from 'xstate';
import type { ToolCallRequest } from '../src/protocol/index.js';

interface MachineSnapshotLike {
  readonly machine?: { readonly id?: unknown };
  readonly value?: unknown;
  readonly context?: unknown;
}

function snapshotOf(snapshot: unknown, machineId: string): { value: StateValue; context: Record<string, unknown> } | undefined {
  if (typeof snapshot !== 'object' || snapshot === null) return undefined;
  const s = snapshot as MachineSnapshotLike;
  if (s.machine?.id !== machineId || typeof s.context !== 'object' || s.context === null) return undefined;
  return { value: s.value as StateValue, context: s.context as Record<string, unknown> };
}

/** A turn actor's snapshot: its turn and state. */
export function turnSnapshotOf(snapshot: unknown): { readonly turnId: string; readonly value: StateValue } | undefined {
  const s = snapshotOf(snapshot, 'turn');
  return s && typeof s.context.turnId === 'string' ? { turnId: s.context.turnId, value: s.value } : undefined;
}

/** A step actor's snapshot: its turn, its index in the turn, and its state. */
export function stepSnapshotOf(snapshot: unknown): { readonly turnId: string; readonly stepIndex: number; readonly value: StateValue } | undefined {
  const s = snapshotOf(snapshot, 'step');
  return s && typeof s.context.turnId === 'string' && typeof s.context.stepIndex === 'number' ? { turnId: s.context.turnId, stepIndex: s.context.stepIndex, value: s.value } : undefined;
}

/** A call actor's snapshot: the call it runs (as the model asked for it) and its state. */
export function toolCallSnapshotOf(snapshot: unknown): { readonly request: ToolCallRequest; readonly value: StateValue } | undefined {
  const s = snapshotOf(snapshot, 'toolCall');
  const request = s?.context.request as Partial<ToolCallRequest> | undefined;
  return s && typeof request?.callId === 'string' && typeof request.toolName === 'string' ? { request: request as ToolCallRequest, value: s.value } : undefined;
}
