/**
 * The page: a session on the example's server (its id in the URL's `#session=`; a new one when
 * there is none), followed over the wire with `connectSession` and rendered with `dsh/react`.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connectSession } from 'dsh/client';
import { SessionProvider } from 'dsh/react';
import { App } from './App';
import { sessionId } from './sessionId';

const id = await sessionId();
const session = connectSession(`/api/sessions/${id}`, { credentials: 'same-origin' });
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <SessionProvider view={session}>
        <App session={session} />
      </SessionProvider>
    </StrictMode>,
  );
}
