/** MessagesStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { describeStreamHandle, dripped, firstContent, sseText } from '@ai4ts/test-kit';
import { MessagesStream, MessagesStreamListener } from '../src/index.js';
import { blockStart, delta, helloStream, messageStart, overloaded } from './fixtures.js';

/** A handle over `sse` served block by block (see `dripped`); `arrived` resolves at the first content event. */
function scripted(sse: string, hang = false): { handle: MessagesStream; arrived: Promise<void> } {
  const handle = new MessagesStream(new MessagesStreamListener(), dripped(sse, hang));
  return { handle, arrived: firstContent(handle) };
}

const textSoFar = [
  messageStart(),
  blockStart(0, { type: 'text', text: '' }),
  delta(0, { type: 'text_delta', text: 'so ' }),
  delta(0, { type: 'text_delta', text: 'far' }),
];

describeStreamHandle('MessagesStream', {
  ok: () => scripted(sseText(helloStream(), { named: true })).handle,
  failing: () => scripted(sseText([...textSoFar, overloaded()], { named: true })).handle,
  hanging: () => scripted(sseText(textSoFar, { named: true }), true),
});
