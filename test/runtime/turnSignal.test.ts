// A turn's `signal` is listened to while the turn runs, and no longer once it has ended: a signal
// that outlives its turns (one per session, say) does not keep every ended turn alive through its
// abort listener. Aborting it between turns changes nothing; aborting it during a turn cancels it.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';

describe('a turn and its abort signal', () => {
  it('ended turns leave no listener on a signal shared by many turns; the signal still cancels a running turn', async () => {
    const rt = createRuntime();
    const session = new AbortController();
    for (let i = 0; i < 20; i++) {
      const { outcome } = await rt.startTurn({ model: scriptedModel([{ text: `answer ${i}` }]), input: `question ${i}`, signal: session.signal }).done;
      expect(outcome).toBe('completed');
    }
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(0);

    // A running turn still hears it.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const model = scriptedModel([
      async () => {
        await held;
        return { text: 'too late' };
      },
    ]);
    const turn = rt.startTurn({ model, input: 'wait', signal: session.signal });
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(1);
    session.abort();
    release();
    const out = await turn.done;
    expect(out.outcome).toBe('cancelled');
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(0);
  });
});
