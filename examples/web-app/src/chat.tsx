/**
 * The same server's session in an app that is already on the AI SDK's `useChat`: the session's
 * `…/chat` endpoint speaks the UI message stream, so `useChat` renders its tool calls and answers
 * their approvals (`addToolApprovalResponse`) through the same exactly-once path as the dsh page.
 */
import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { sessionId } from './sessionId';

interface ToolView {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  approval?: { id: string };
}

function Chat({ id }: { id: string }) {
  const { messages, sendMessage, addToolApprovalResponse, status } = useChat({
    id,
    transport: new DefaultChatTransport({ api: `/api/sessions/${id}/chat` }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  return (
    <main>
      <p data-testid="status">status: {status}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (input.trim()) void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input aria-label="message" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit">Send</button>
      </form>
      {messages.map((m) => (
        <div key={m.id} className="message" data-role={m.role}>
          {m.parts.map((part, i) => {
            if (part.type === 'text') return <p key={i}>{part.text}</p>;
            if (!part.type.startsWith('tool-')) return null;
            const t = part as unknown as ToolView;
            return (
              <div key={i} className="tool" data-tool={t.toolCallId} data-state={t.state}>
                <code>{t.type.slice(5)}</code> {t.state}
                {t.state === 'approval-requested' && t.approval && (
                  <>
                    <button onClick={() => void addToolApprovalResponse({ id: t.approval!.id, approved: true })}>Approve</button>
                    <button onClick={() => void addToolApprovalResponse({ id: t.approval!.id, approved: false, reason: 'not from the chat' })}>Reject</button>
                  </>
                )}
                {t.state === 'output-available' && <span data-testid="output"> {String(t.output)}</span>}
              </div>
            );
          })}
        </div>
      ))}
    </main>
  );
}

const id = await sessionId();
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <Chat id={id} />
    </StrictMode>,
  );
}
