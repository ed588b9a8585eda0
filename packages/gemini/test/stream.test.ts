/** GeminiStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { describeStreamHandle, dripped, firstContent, sseText } from '@ai4ts/test-kit';
import { GeminiStream, GeminiStreamListener, type Part } from '../src/index.js';

function scripted(sse: string, hang = false): { handle: GeminiStream; arrived: Promise<void> } {
  const handle = new GeminiStream(new GeminiStreamListener(), dripped(sse, hang));
  return { handle, arrived: firstContent(handle) };
}

const chunk = (parts: Part[], finishReason?: string) => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason && { finishReason }) }],
});

const textSoFar = [chunk([{ text: 'so ' }]), chunk([{ text: 'far' }])];

describeStreamHandle('GeminiStream', {
  ok: () => scripted(sseText([chunk([{ text: 'Hello' }]), chunk([{ text: ', world' }], 'STOP')])).handle,
  failing: () => scripted(sseText([...textSoFar, { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }])).handle,
  hanging: () => scripted(sseText(textSoFar), true),
});
