/**
 * The session view at scale (row key `viewScale`, issue 31 item 9): one turn of 5,000 parallel
 * no-op calls, with and without a `createSessionView` over the runtime (subscribed, reading each
 * snapshot it is told of, as a UI does). Interleaved, after one untimed warm-up of each; medians.
 * The view's work must grow with the turn, not with its square: the target is ×2 at most.
 */
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { createSessionView } from '../../src/view/sessionView.js';
import { dshScript, noopTool } from '../lib/fixtures.js';
import { median, nowMs } from '../lib/stats.js';

export const VIEW_SCALE_CALLS = 5_000;
export const VIEW_SCALE_TARGET = 2;

export interface ViewScaleResult {
  calls: number;
  plainMs: number;
  viewMs: number;
  /** viewMs ÷ plainMs. */
  ratio: number;
}

async function turn(withView: boolean): Promise<number> {
  const rt = createRuntime({ tools: [noopTool] });
  if (withView) {
    const view = createSessionView(rt);
    view.subscribe(() => void view.getSnapshot());
  }
  const model = scriptedModel(dshScript(VIEW_SCALE_CALLS));
  const t0 = nowMs();
  await rt.startTurn({ model, input: 'go' }).done;
  return nowMs() - t0;
}

export async function runViewScale(options: { quick: boolean }): Promise<{ result: ViewScaleResult; reps: number }> {
  const reps = options.quick ? 3 : 7;
  await turn(false);
  await turn(true);
  const plain: number[] = [];
  const view: number[] = [];
  for (let i = 0; i < reps; i++) {
    plain.push(await turn(false));
    view.push(await turn(true));
  }
  const plainMs = median(plain);
  const viewMs = median(view);
  return { result: { calls: VIEW_SCALE_CALLS, plainMs, viewMs, ratio: viewMs / plainMs }, reps };
}
