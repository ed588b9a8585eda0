/** The daemon dialects' whole answers, served by the bridge's tests and the gateway's. */
import { sseFrame } from '@ai4ts/test-kit';

/** A whole typed-dialect answer: reasoning, a daemon-run tool round, text over two rounds, usage per round, done. */
export const TYPED_ANSWER = [
  sseFrame({ type: 'reasoning', content: 'Let me ' }),
  sseFrame({ type: 'reasoning', content: 'check.' }),
  sseFrame({ type: 'tool_start', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
  sseFrame({ type: 'tool_result', id: 'call_1', name: 'get_weather', output: '18C', success: true, duration_ms: 42 }),
  sseFrame({ type: 'tokens', prompt: 10, completion: 5, total: 15 }),
  sseFrame({ type: 'reasoning', content: ' Now answer.' }),
  sseFrame({ type: 'text', content: 'It is ' }),
  sseFrame({ type: 'text', content: '18C in Paris.' }),
  sseFrame({ type: 'tokens', prompt: 20, completion: 7, total: 27 }),
  sseFrame({
    type: 'done',
    tokens: { prompt: 30, completion: 12, total: 42 },
    tool_calls: 1,
    session_id: 'daemon-session',
  }),
].join('');

/** A whole named-dialect answer. */
export const NAMED_ANSWER = [
  sseFrame({ message_id: 'm-1' }, 'start'),
  sseFrame({ content: 'Hello' }, 'message'),
  sseFrame({ content: ', world' }, 'message'),
  sseFrame({ message_id: 'm-1' }, 'done'),
].join('');
