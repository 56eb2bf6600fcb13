// The bench's "where the time goes" rows (bench/workloads/whereTimeGoes.ts) charge each profile
// sample to an area; a wrong rule would move a gap from one area to another in the published table.
import { describe, expect, it } from 'vitest';
import { areaOf, selfTimeByArea } from '../../bench/workloads/whereTimeGoes.js';

const base = 'file:///repo/bench/.build/';

describe('where the time goes: charging a profile sample to an area', () => {
  it('charges by the file a frame runs in: XState, the OpenTelemetry packages, Node, zod, dsh machines/, src/, its telemetry', () => {
    expect(areaOf('file:///repo/node_modules/xstate/dist/raise-1.cjs.js', 'microstep', base)).toBe('xstate');
    expect(areaOf('file:///repo/node_modules/@opentelemetry/sdk-trace-base/build/src/Span.js', 'addEvent', base)).toBe('otel');
    expect(areaOf('node:internal/abort_controller', 'createAbortSignal', base)).toBe('node');
    expect(areaOf('file:///repo/node_modules/zod/v4/core/schemas.js', 'parse', base)).toBe('zod');
    expect(areaOf(`${base}machines/toolCall.js`, 'entry', base)).toBe('machines');
    expect(areaOf(`${base}src/runtime/pipeline/execute.js`, 'runExecute', base)).toBe('dsh');
    expect(areaOf(`${base}src/runtime/telemetry/telemetryProjection.js`, 'onStage', base)).toBe('telemetry');
  });

  it('charges the collector to GC; the bench harness, other packages, other directories and V8 itself to other', () => {
    expect(areaOf('', '(garbage collector)', base)).toBe('gc');
    expect(areaOf('', '(program)', base)).toBe('other');
    expect(areaOf(`${base}bench/lib/machinesAlone.js`, 'machinesAloneBatch', base)).toBe('other');
    // A machines/ or src/ directory that is not the one the bench runs is not dsh's.
    expect(areaOf('file:///elsewhere/machines/toolCall.js', 'entry', base)).toBe('other');
    expect(areaOf('file:///repo/node_modules/dsh/dist/src/index.js', 'createRuntime', base)).toBe('other');
  });

  it('sums each sample\'s time delta into its node\'s area', () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '' } },
        { id: 2, callFrame: { functionName: 'microstep', url: 'file:///repo/node_modules/xstate/dist/x.js' } },
        { id: 3, callFrame: { functionName: '(garbage collector)', url: '' } },
        { id: 4, callFrame: { functionName: 'append', url: `${base}src/runtime/log/sessionLog.js` } },
      ],
      samples: [2, 2, 3, 4, 2, 1],
      timeDeltas: [10, 20, 5, 7, 30, 1],
    };
    expect(selfTimeByArea(profile, base)).toEqual({ xstate: 60, gc: 5, machines: 0, dsh: 7, telemetry: 0, zod: 0, otel: 0, node: 0, other: 1 });
  });
});
