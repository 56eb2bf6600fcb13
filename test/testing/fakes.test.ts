/** The fakes of dsh/testing, used as a test of one's own agent would: what the log and the results show. */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { fakeTool, faultyLog, LogFaultError, ManualClock, scriptedModel } from '../../src/testing/index.js';

const oneCall = (toolName: string) => scriptedModel([{ toolCalls: [{ toolName, input: { a: 1 } }] }, { text: 'done' }]);
const codes = (rt: ReturnType<typeof createRuntime>) => rt.log.events().flatMap((e) => (e.type === 'tool/result' ? [e.result.error?.code ?? e.result.content] : []));

describe('fakeTool', () => {
  it('returns its value, or a function of the arguments', async () => {
    const echo = fakeTool({ name: 'echo', returns: (args: unknown) => `got ${JSON.stringify(args)}` });
    const rt = createRuntime({ tools: [echo] });
    await rt.startTurn({ input: 'x', model: oneCall('echo') }).done;
    expect(codes(rt)).toEqual(['got {"a":1}']);
    expect(echo.calls.map((c) => [c.args, c.settled])).toEqual([[{ a: 1 }, true]]);
  });

  it('throws: the call ends TOOL_FAILED and the turn goes on (SPEC §5)', async () => {
    const rt = createRuntime({ tools: [fakeTool({ name: 'boom', throws: new Error('disk full') })] });
    const { outcome } = await rt.startTurn({ input: 'x', model: oneCall('boom') }).done;
    expect([outcome, codes(rt)]).toEqual(['completed', ['TOOL_FAILED']]);
  });

  it('hangs until the turn is cancelled: ABORTED, the body saw its signal', async () => {
    const stuck = fakeTool({ name: 'stuck', hangs: true });
    const rt = createRuntime({ tools: [stuck] });
    const turn = rt.startTurn({ input: 'x', model: oneCall('stuck') });
    const call = await stuck.nextCall();
    turn.cancel();
    expect((await turn.done).outcome).toBe('cancelled');
    expect([codes(rt), call.signal.aborted, call.settled]).toEqual([['ABORTED'], true, true]);
  });

  it('onCue: progress is logged while it runs, then it finishes when told', async () => {
    const deploy = fakeTool({ name: 'deploy', onCue: true });
    const rt = createRuntime({ tools: [deploy], progressIntervalMs: 0 });
    const turn = rt.startTurn({ input: 'x', model: oneCall('deploy') });
    const call = await deploy.nextCall();
    call.progress({ message: 'halfway', progress: 1, total: 2 });
    call.finish('deployed');
    await turn.done;
    const progress = rt.log.events().filter((e) => e.type === 'tool/progress');
    expect(progress.map((e) => e.type === 'tool/progress' && e.message)).toEqual(['halfway']);
    expect(codes(rt)).toEqual(['deployed']);
  });

  it('ignoresSignal: a cancelled call still ends ABORTED once its grace passes, the body unsettled (SPEC §5)', async () => {
    const clock = new ManualClock();
    const deaf = fakeTool({ name: 'deaf', hangs: true, ignoresSignal: true });
    const rt = createRuntime({ tools: [deaf], clock });
    const turn = rt.startTurn({ input: 'x', model: oneCall('deaf') });
    const call = await deaf.nextCall();
    turn.cancel();
    await clock.advance(rt.limits.abortGraceMs);
    await turn.done;
    expect([codes(rt), call.signal.aborted, call.settled]).toEqual([['ABORTED'], true, false]);
  });
});

describe('faultyLog', () => {
  it('throw: append k throws a LogFaultError and keeps nothing', () => {
    const log = faultyLog({ failAt: 2 });
    log.append({ type: 'turn/start', turnId: 't', input: 'x' });
    expect(() => log.append({ type: 'turn/start', turnId: 'u', input: 'y' })).toThrow(LogFaultError);
    expect([log.lastSeq, log.appends]).toEqual([1, 2]);
  });

  it('durability: a tool/call that cannot be made durable never runs its body (SPEC §8)', async () => {
    const write = fakeTool({ name: 'write' });
    // turn/start, step/start, tool/call: the third append is the first never durable.
    const rt = createRuntime({ tools: [write], log: faultyLog({ failAt: 3, how: 'durability' }) });
    await rt.startTurn({ input: 'x', model: oneCall('write') }).done;
    expect(write.calls).toEqual([]);
    const result = rt.log.events().find((e) => e.type === 'tool/result');
    expect(result?.type === 'tool/result' && result.result.isError).toBe(true);
  });
});
