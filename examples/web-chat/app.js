// The browser side: POST the question, read the OpenAI SSE stream with @ai4ts/sse, render deltas as they arrive.
// The proxy keeps each stream resumable: the page saves the stream's id, its last event id and what it rendered in
// sessionStorage, so that after a reload it shows the exchange again and reads the rest with
// GET /v1/streams/{id} + Last-Event-ID (no gap, no duplicate).
import { parseSse } from '/sse/index.js';

const form = document.querySelector('#ask');
const input = document.querySelector('#question');
const log = document.querySelector('#log');
const SAVED = 'web-chat:stream';
// A reload aborts the read in flight: that is no failure, and what was saved must stay for the next load.
let leaving = false;
addEventListener('pagehide', () => {
  leaving = true;
});

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (!question) return;
  input.value = '';
  const saved = { question, streamId: '', lastEventId: '', reasoning: '', answer: '', deltas: 0, tokens: '' };
  await run(saved, () =>
    fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ai4ts-resumable': '1' },
      body: JSON.stringify({
        model: 'daemon',
        messages: [{ role: 'user', content: question }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    }),
  );
});

// A stream this tab was reading before a reload: show what it had, then read the rest.
const pending = JSON.parse(sessionStorage.getItem(SAVED) ?? 'null');
if (pending?.streamId) {
  void run(pending, () =>
    fetch(`/v1/streams/${encodeURIComponent(pending.streamId)}`, { headers: { 'last-event-id': pending.lastEventId } }),
  );
}

/** Shows the exchange and reads `open()`'s stream into it, whatever happens. */
async function run(saved, open) {
  const view = addExchange(saved);
  form.querySelector('button').disabled = true;
  try {
    const response = await open();
    if (!response.ok) throw new Error((await response.json()).error?.message ?? `HTTP ${response.status}`);
    saved.streamId = response.headers.get('x-ai4ts-stream-id') ?? '';
    await read(response, view, saved);
  } catch (error) {
    if (leaving) return;
    view.error.textContent = String(error.message ?? error);
    view.status.textContent = 'failed';
  } finally {
    if (!leaving) sessionStorage.removeItem(SAVED);
    form.querySelector('button').disabled = false;
  }
}

function addExchange(saved) {
  const root = document.createElement('div');
  root.className = 'exchange';
  const part = (className, text = '') => {
    const el = document.createElement('div');
    el.className = className;
    el.textContent = text;
    root.append(el);
    return el;
  };
  const view = {
    question: part('question', saved.question),
    reasoning: part('reasoning', saved.reasoning),
    answer: part('answer', saved.answer),
    error: part('error'),
    status: part('status', saved.streamId ? 'resuming' : 'waiting'),
  };
  if (saved.tokens) view.status.dataset.tokens = saved.tokens;
  log.append(root);
  return view;
}

async function read(response, view, saved) {
  view.status.textContent = 'streaming';
  for await (const sse of parseSse(response)) {
    if (sse.data === '[DONE]') {
      view.status.textContent = 'done';
      return;
    }
    const chunk = JSON.parse(sse.data);
    if (chunk.error) throw new Error(chunk.error.message);
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.reasoning_content) saved.reasoning += delta.reasoning_content;
    if (delta.content) saved.answer += delta.content;
    if (chunk.usage) saved.tokens = String(chunk.usage.total_tokens);
    saved.deltas++;
    saved.lastEventId = sse.id ?? saved.lastEventId;
    sessionStorage.setItem(SAVED, JSON.stringify(saved));
    view.reasoning.textContent = saved.reasoning;
    view.answer.textContent = saved.answer;
    if (saved.tokens) view.status.dataset.tokens = saved.tokens;
    view.answer.dataset.deltas = String(saved.deltas);
  }
  throw new Error('The stream ended before [DONE]');
}
