/**
 * One turn: its state, each step's text as it streams, its calls in the model's order (each with
 * its stage, arguments, progress, result, and the approval it waits on), its steering messages and
 * a box to send one, and Cancel while it runs.
 */
import { useState } from 'react';
import { useApprovals, useCalls, useSessionView, useTurn } from 'dsh/react';
import type { SessionApproval, SessionCall } from 'dsh/view';
import type { Session } from './session';

export function Turn(props: { turnId: string; session: Session }) {
  const turn = useTurn(props.turnId);
  const calls = useCalls(props.turnId);
  const view = useSessionView();
  const [steer, setSteer] = useState('');
  if (!turn) return null;
  const live = turn.state === 'running' || turn.state === 'queued';
  return (
    <section className="turn" data-turn-id={turn.turnId} data-state={turn.state} data-outcome={turn.outcome ?? ''}>
      <h2>
        {turn.turnId} <span className="state">{turn.state === 'ended' ? turn.outcome : turn.state}</span>
        {live ? (
          <button className="cancel" onClick={() => view.cancel(turn.turnId, 'cancelled from the page')}>
            Cancel
          </button>
        ) : null}
      </h2>
      {turn.steps.map((s) => (s.text ? <p key={s.stepIndex} className="step-text" data-step={s.stepIndex}>{s.text}</p> : null))}
      {calls.length ? (
        <ol className="calls">
          {calls.map((c) => (
            <CallRow key={c.key} call={c} session={props.session} />
          ))}
        </ol>
      ) : null}
      {turn.steers.length ? (
        <ul className="steers">
          {turn.steers.map((s, i) => (
            <li key={i} className="steer" data-status={s.status}>
              “{s.text}” <span className="note">{s.status === 'delivered' ? `in the request of step ${s.stepIndex}` : s.status === 'follow-up' ? `became ${s.turnId}` : 'waiting for the next request'}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {live ? (
        <form
          className="steer-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (steer.trim() === '') return;
            void view.steer(turn.turnId, steer);
            setSteer('');
          }}
        >
          <input aria-label={`steer ${turn.turnId}`} value={steer} onChange={(e) => setSteer(e.target.value)} placeholder="a message for the next request" />
          <button type="submit">Steer</button>
        </form>
      ) : null}
      {turn.state === 'ended' ? <p className="answer">{turn.answer}</p> : null}
    </section>
  );
}

function CallRow(props: { call: SessionCall; session: Session }) {
  const { call, session } = props;
  const path = pathOf(call.args);
  const { result } = call;
  const stage = result ? (result.isError ? result.error.code : 'ok') : call.stage;
  const tone = result ? (result.isError ? 'error' : 'ok') : 'live';
  return (
    <li className={`call ${tone}`} data-call-id={call.callId} data-step={call.stepIndex} data-stage={stage}>
      <span className="index">
        step {call.stepIndex} #{call.index}
      </span>
      <code className="tool">{call.toolName}</code>
      <code className="args">{argsText(call.args)}</code>
      <span className="stage">{stage}</span>
      {call.stage === 'executing' && call.toolName === 'read' && path !== undefined && session.isHolding() ? (
        <button className="finish" onClick={() => session.release(path)}>
          Finish
        </button>
      ) : null}
      {call.stage === 'settled' ? <span className="note">result held until the calls before it commit</span> : null}
      {call.progress?.message ? <span className="progress">{call.progress.message}</span> : null}
      {result ? <span className="content">{result.content.slice(0, 80)}</span> : null}
      {call.approval ? <Approval approval={call.approval} /> : null}
    </li>
  );
}

function Approval(props: { approval: SessionApproval }) {
  const { approval } = props;
  const { approve, deny, suspend } = useApprovals();
  const [reason, setReason] = useState('');
  const preview = previewText(approval.preview);
  return (
    <div className="approval" role="group" aria-label={`approve ${approval.toolName}`} data-answerable={approval.answerable}>
      <span className="reason">{approval.reason ?? 'asks for approval'}</span>
      {preview !== undefined ? <pre className="preview">{preview}</pre> : null}
      {approval.answerable ? (
        <>
          <button onClick={() => approve(approval.id, 'once')}>Allow once</button>
          <button onClick={() => approve(approval.id, 'always')}>Allow always</button>
          <input aria-label="reason to deny" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why not (optional)" />
          <button onClick={() => deny(approval.id, reason || undefined)}>Deny</button>
          <button onClick={() => suspend(approval.id)}>Decide later</button>
        </>
      ) : (
        <span className="note">waits for an answer (resume the session to give it)</span>
      )}
    </div>
  );
}

/** A preview as text: a string as it is, an object's `text`/`diff`/`command` field, else its JSON. */
function previewText(preview: unknown): string | undefined {
  if (preview === undefined || preview === null) return undefined;
  if (typeof preview === 'string') return preview;
  if (typeof preview === 'object') {
    for (const key of ['diff', 'text', 'command']) {
      const v: unknown = Reflect.get(preview, key);
      if (typeof v === 'string') return v;
    }
  }
  return JSON.stringify(preview, null, 2);
}

/** The `path` argument of a call, when it has one. */
function pathOf(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null || !('path' in args)) return undefined;
  return typeof args.path === 'string' ? args.path : undefined;
}

function argsText(args: unknown): string {
  const text = typeof args === 'string' ? args : JSON.stringify(args);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
