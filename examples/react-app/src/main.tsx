import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SessionProvider } from 'dsh/react';
import { App } from './App';
import { createSession } from './session';

const session = createSession();
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <SessionProvider view={session.view}>
        <App session={session} />
      </SessionProvider>
    </StrictMode>,
  );
}
