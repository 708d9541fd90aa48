/**
 * U6: the page the useChat spec opens — React and the real `@ai-sdk/react` `useChat` on `DefaultChatTransport`, the way
 * an application writes it (bundled by esbuild in the spec; `ai` is @ai-sdk/react's own copy). It shows each part in
 * an element the spec reads: text, reasoning, a tool part with its state and output, an Approve button for a call
 * that waits for a person (H8); and a Stop button.
 */
import { createElement as h, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import type { UIMessage } from 'ai';

/** What the page reads of a tool part, of any tool. */
interface ToolPartView {
  type: string;
  toolCallId: string;
  state: string;
  output?: unknown;
  errorText?: string;
  approval?: { id: string };
}

function Chat(): ReactNode {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, stop, error, addToolApprovalResponse } = useChat({
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    // H8: the approval goes back in the next request, as soon as every waiting call has its answer
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void sendMessage({ text: input });
    setInput('');
  };
  const part = (message: UIMessage, p: UIMessage['parts'][number], i: number): ReactNode => {
    if (p.type === 'text') return h('span', { key: i, className: 'text' }, p.text);
    if (p.type === 'reasoning') return h('em', { key: i, className: 'reasoning' }, p.text);
    if (!p.type.startsWith('tool-')) return null;
    const tool = p as unknown as ToolPartView;
    const said = tool.state === 'output-available' ? String(tool.output) : tool.state === 'output-error' ? String(tool.errorText) : '';
    return h(
      'div',
      { key: i, className: 'tool', 'data-tool': tool.type.slice(5), 'data-state': tool.state, 'data-message': message.id },
      h('b', null, tool.type.slice(5)),
      h('span', { className: 'output' }, said),
      tool.state === 'approval-requested' && tool.approval !== undefined
        ? h('button', { className: 'approve', onClick: () => void addToolApprovalResponse({ id: tool.approval!.id, approved: true }) }, 'Approve')
        : null,
    );
  };
  return h(
    'main',
    null,
    h('p', { id: 'status' }, status),
    error === undefined ? null : h('p', { id: 'error' }, error.message),
    ...messages.map((message) => h('div', { key: message.id, className: 'message', 'data-role': message.role }, ...message.parts.map((p, i) => part(message, p, i)))),
    h(
      'form',
      { onSubmit: submit },
      h('input', { id: 'prompt', value: input, onChange: (event: { target: { value: string } }) => setInput(event.target.value) }),
      h('button', { id: 'send', type: 'submit', disabled: status !== 'ready' }, 'Send'),
      h('button', { id: 'stop', type: 'button', onClick: () => void stop() }, 'Stop'),
    ),
  );
}

createRoot(document.getElementById('root')!).render(h(Chat));
