import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { useSelector } from '@xstate/react';
import type { TurnHandle, TurnResult } from 'dsh';
import { CallList, stageOf } from './CallList';
import { logStore, type Session } from './session';

export function App(props: { session: Session }) {
  const { session } = props;
  const log = useMemo(() => logStore(session.rt), [session]);
  const events = useSyncExternalStore(log.subscribe, log.events);
  const [turns, setTurns] = useState<readonly TurnHandle[]>([]);
  const [running, setRunning] = useState(false);

  const start = () => {
    const turn = session.runTurn();
    setTurns((t) => [...t, turn]);
    setRunning(true);
    void turn.done.finally(() => setRunning(false));
  };

  return (
    <main>
      <h1>dsh in a web page</h1>
      <p>
        The machines of <code>dsh</code> run here, in the page: a scripted model, in-memory tools and log. Each row is a
        tool call; its stage is read from its call actor.
      </p>
      <button className="run" onClick={start} disabled={running}>
        Run a turn
      </button>
      {turns.map((turn) => (
        <Turn key={turn.turnId} turn={turn} session={session} events={events} />
      ))}
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
      <p className="log-size" data-events={events.length} data-warnings={events.filter((e) => e.type === 'warning').length}>
        {events.length} log events
      </p>
    </main>
  );
}

function Turn(props: { turn: TurnHandle; session: Session; events: Parameters<typeof CallList>[0]['events'] }) {
  const { turn, session, events } = props;
  const state = useSelector(turn.actor, (s) => (s.status === 'active' ? stageOf(s.value) : s.status));
  const [result, setResult] = useState<TurnResult | undefined>();
  useEffect(() => {
    let live = true;
    void turn.done.then((r) => live && setResult(r));
    return () => {
      live = false;
    };
  }, [turn]);
  return (
    <section className="turn" data-turn-id={turn.turnId} data-outcome={result?.outcome ?? ''}>
      <h2>
        {turn.turnId} <span className="state">{result ? result.outcome : state}</span>
        {result ? null : (
          <button className="cancel" onClick={() => turn.cancel('cancelled from the page')}>
            Cancel
          </button>
        )}
      </h2>
      <CallList turn={turn} events={events} approvals={session.approvals} />
      {result ? <p className="answer">{result.text}</p> : null}
    </section>
  );
}
