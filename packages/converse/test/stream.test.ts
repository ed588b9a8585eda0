/** ConverseStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { describeStreamHandle, dripped, firstContent, sseText } from '@ai4ts/test-kit';
import { type ConverseStreamOutput, ConverseStream, ConverseStreamListener } from '../src/index.js';

function scripted(sse: string, hang = false): { handle: ConverseStream; arrived: Promise<void> } {
  const handle = new ConverseStream(new ConverseStreamListener(), dripped(sse, hang));
  return { handle, arrived: firstContent(handle) };
}

const text = (value: string): ConverseStreamOutput => ({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: value } } });
const textSoFar: ConverseStreamOutput[] = [{ messageStart: { role: 'assistant' } }, text('so '), text('far')];

describeStreamHandle('ConverseStream', {
  ok: () =>
    scripted(
      sseText([
        ...textSoFar,
        { contentBlockStop: { contentBlockIndex: 0 } },
        { messageStop: { stopReason: 'end_turn' } },
        { metadata: { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } } },
      ]),
    ).handle,
  // A tool input that is not JSON: the listener's ProtocolError, with the text so far as partial.
  failing: () =>
    scripted(
      sseText([
        ...textSoFar,
        { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'f' } } } },
        { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: 'not json' } } } },
        { contentBlockStop: { contentBlockIndex: 1 } },
      ]),
    ).handle,
  hanging: () => scripted(sseText(textSoFar), true),
});
