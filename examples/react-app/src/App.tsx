/**
 * The page: a button that runs a turn (a second click while one runs queues one), the turns with
 * their calls, a Resume button while the session is suspended, and the files. Everything shown is
 * read from the session view with dsh/react's hooks.
 */
import { useState } from 'react';
import { useSession, useTurns } from 'dsh/react';
import type { Session } from './session';
import { Turn } from './Turn';

export function App(props: { session: Session }) {
  const { session } = props;
  const { suspendedTurnId, lastSeq } = useSession();
  const turns = useTurns();
  const [holding, setHolding] = useState(session.isHolding());
  return (
    <main>
      <h1>dsh in a web page</h1>
      <p>
        The machines of <code>dsh</code> run here, in the page: a scripted model, in-memory tools, a session log kept in
        this tab&apos;s storage. Each row is a tool call, read from the session view (<code>dsh/react</code>).
      </p>
      {session.droppedLog ? <p className="warning">The stored session did not read back; a new one started.</p> : null}
      <p className="actions">
        <button className="run" onClick={() => session.runTurn()} disabled={suspendedTurnId !== undefined}>
          Run a turn
        </button>
        {suspendedTurnId !== undefined ? (
          <button className="resume" onClick={() => session.resume()}>
            Resume {suspendedTurnId}
          </button>
        ) : null}
        <label>
          <input
            type="checkbox"
            checked={holding}
            onChange={(e) => {
              session.setHolding(e.target.checked);
              setHolding(e.target.checked);
            }}
          />{' '}
          Hold each read until I finish it
        </label>
        <button
          className="reset"
          onClick={() => {
            session.reset();
            window.location.reload();
          }}
        >
          New session
        </button>
      </p>
      {turns.map((t) => (
        <Turn key={t.turnId} turnId={t.turnId} session={session} />
      ))}
      <FinishedReads session={session} />
      <section className="files">
        <h2>Files</h2>
        <ul>
          {[...session.files.keys()].sort().map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      </section>
      <p className="log-size" data-events={lastSeq}>
        {lastSeq} log events
      </p>
    </main>
  );
}

/** The reads of the latest batch in the order their bodies finished (re-read on every render). */
function FinishedReads(props: { session: Session }) {
  useSession(); // re-render as the session moves
  const order = props.session.finishedReads();
  return (
    <p className="finished" data-order={order.join(' ')}>
      Reads finished in this order: {order.length ? order.join(', ') : 'none yet'}
    </p>
  );
}
