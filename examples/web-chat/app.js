// The browser side: POST the question, read the OpenAI SSE stream with @ai4ts/sse, render deltas as they arrive.
import { parseSse } from '/sse/index.js';

const form = document.querySelector('#ask');
const input = document.querySelector('#question');
const log = document.querySelector('#log');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (!question) return;
  input.value = '';
  const view = addExchange(question);
  form.querySelector('button').disabled = true;
  try {
    await stream(question, view);
  } catch (error) {
    view.error.textContent = String(error.message ?? error);
    view.status.textContent = 'failed';
  } finally {
    form.querySelector('button').disabled = false;
  }
});

function addExchange(question) {
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
    question: part('question', question),
    reasoning: part('reasoning'),
    answer: part('answer'),
    error: part('error'),
    status: part('status', 'waiting'),
  };
  log.append(root);
  return view;
}

async function stream(question, view) {
  const response = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'daemon',
      messages: [{ role: 'user', content: question }],
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (!response.ok) throw new Error((await response.json()).error?.message ?? `HTTP ${response.status}`);
  view.status.textContent = 'streaming';
  let deltas = 0;
  for await (const sse of parseSse(response)) {
    if (sse.data === '[DONE]') {
      view.status.textContent = 'done';
      return;
    }
    const chunk = JSON.parse(sse.data);
    if (chunk.error) throw new Error(chunk.error.message);
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.reasoning_content) view.reasoning.textContent += delta.reasoning_content;
    if (delta.content) view.answer.textContent += delta.content;
    if (chunk.usage) view.status.dataset.tokens = String(chunk.usage.total_tokens);
    view.answer.dataset.deltas = String(++deltas);
  }
  throw new Error('The stream ended before [DONE]');
}
