/**
 * The session as a person works with it: a prompt, each turn with its text and calls (stage,
 * result), a question answered once (allow, or deny with a reason typed here), a steer for the
 * running turn, a cancel, a resume for a suspended turn, and where the connection stands.
 */
import { useState, useSyncExternalStore, type FormEvent } from 'react';
import type { RemoteSession, SessionApproval, SessionTurn } from 'dsh/client';
import { useApprovals, useSession, useTurns } from 'dsh/react';

export function App({ session }: { session: RemoteSession }) {
  const turns = useTurns();
  const { suspendedTurnId, activeTurnId, lastSeq } = useSession();
  const status = useSyncExternalStore(session.onStatus, session.status);
  const [input, setInput] = useState('');
  const [error, setError] = useState('');
  const start = (e: FormEvent) => {
    e.preventDefault();
    if (!input.trim()) return;
    session.startTurn(input).then(() => setInput(''), (err: unknown) => setError(String(err)));
  };
  return (
    <main data-last-seq={lastSeq}>
      <p className="status" data-testid="connection">
        connection: {status.state}
      </p>
      <form onSubmit={start}>
        <input aria-label="prompt" value={input} onChange={(e) => setInput(e.target.value)} placeholder="ask the agent" size={50} />
        <button type="submit">Send</button>
      </form>
      {suspendedTurnId && !activeTurnId && (
        <button onClick={() => void session.resume().catch((err: unknown) => setError(String(err)))}>Resume</button>
      )}
      {error && <p role="alert">{error}</p>}
      {turns.map((t) => (
        <Turn key={t.turnId} turn={t} session={session} />
      ))}
    </main>
  );
}

function Turn({ turn, session }: { turn: SessionTurn; session: RemoteSession }) {
  const [steer, setSteer] = useState('');
  const live = turn.state === 'running' || turn.state === 'suspending';
  return (
    <section className="turn" data-turn={turn.turnId} data-state={turn.state} data-outcome={turn.outcome ?? ''}>
      <h2>
        {turn.input}
        <span className="state" data-testid="turn-state">
          {turn.state}
          {turn.outcome ? ` (${turn.outcome})` : ''}
        </span>
      </h2>
      {turn.steps.map((s) => (
        <pre key={s.stepIndex}>{s.text}</pre>
      ))}
      <ul className="calls">
        {turn.calls.map((c) => (
          <li key={c.key} className="call" data-call={c.callId} data-stage={c.stage}>
            <code>{c.toolName}</code>
            <span className="stage">{c.stage}</span>
            {c.approval && <Question approval={c.approval} />}
            {c.approvalAnswer && <span data-testid="answer">{c.approvalAnswer}</span>}
            {c.result && <span data-testid="result">{c.result.content}</span>}
          </li>
        ))}
      </ul>
      {live && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (steer.trim()) void session.steer(turn.turnId, steer).then(() => setSteer(''));
          }}
        >
          <input aria-label="steer" value={steer} onChange={(e) => setSteer(e.target.value)} placeholder="steer this turn" />
          <button type="submit">Steer</button>
          <button type="button" onClick={() => session.cancel(turn.turnId, 'cancelled from the page')}>
            Cancel
          </button>
        </form>
      )}
    </section>
  );
}

function Question({ approval }: { approval: SessionApproval }) {
  const { approve, deny } = useApprovals();
  const [reason, setReason] = useState('');
  if (!approval.answerable) return <span>waiting for an answer elsewhere</span>;
  return (
    <span className="approval">
      {approval.reason}
      <button onClick={() => approve(approval.id)}>Allow</button>
      <input aria-label="reason" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why not" />
      <button onClick={() => deny(approval.id, reason)}>Deny</button>
    </span>
  );
}
