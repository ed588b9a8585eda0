/**
 * Every StreamSource form (a Response, a byte stream, a text stream, an async iterable of bytes and text, the whole
 * string), cut anywhere, reads to the same events and the same failure with the same `partial`.
 */
import { type BridgeEvent, type Dialect, namedEventDialect, typedEventDialect } from '@ai4ts/bridge';
import { AbortError, Ai4tsError, ApiError, ProtocolError, StreamIncompleteError, type StreamSource } from '@ai4ts/core';
import fc from 'fast-check';
import { sseFrame, streamOf } from '@ai4ts/test-kit';
import { describe, expect, it } from 'vitest';

const encoder = new TextEncoder();
/** Small enough that the generated oversized event trips it, large enough for every other generated event. */
const MAX_EVENT_SIZE = 600;

/** How a stream ends. */
type Ending = 'done' | 'done-then-more' | 'error' | 'error-then-done' | 'cut' | 'cut-mid-event' | 'bad-json' | 'oversized';
const ENDINGS: Ending[] = [
  'done',
  'done-then-more',
  'error',
  'error-then-done',
  'cut',
  'cut-mid-event',
  'bad-json',
  'oversized',
];

const content = fc.string({ unit: 'grapheme', maxLength: 12 });

/** The body of a typed-dialect event, before its ending. */
const typedEvent = fc.oneof(
  content.map((c) => sseFrame({ type: 'text', content: c })),
  content.map((c) => sseFrame({ type: 'reasoning', content: c })),
  fc
    .tuple(fc.nat(99), fc.constantFrom('{"city":"Paris"}', '', '{"q":"é☀️"}'))
    .map(([n, args]) => sseFrame({ type: 'tool_start', id: `call_${n}`, name: 'lookup', arguments: args })),
  fc
    .tuple(fc.nat(99), content, fc.boolean())
    .map(([n, output, success]) => sseFrame({ type: 'tool_result', id: `call_${n}`, name: 'lookup', output, success })),
  fc.tuple(fc.nat(50), fc.nat(50)).map(([p, c]) => sseFrame({ type: 'tokens', prompt: p, completion: c, total: p + c })),
  content.map((c) => sseFrame({ type: 'heartbeat', note: c })),
  fc.constant(': a comment\n\n'),
);

/** The body of a named-dialect event, before its ending. */
const namedEvent = fc.oneof(
  content.map((c) => sseFrame({ content: c }, 'message')),
  fc.constant(sseFrame({ message_id: 'm-1' }, 'start')),
  content.map((c) => sseFrame({ note: c }, 'typing')),
);

function ending(dialect: Dialect, kind: Ending): string {
  const isTyped = dialect === typedEventDialect;
  const done = isTyped ? sseFrame({ type: 'done', session_id: 's-1' }) : sseFrame({ message_id: 'm-1' }, 'done');
  const error = isTyped ? sseFrame({ type: 'error', message: 'crashed', code: 'boom' }) : sseFrame({ error: 'crashed', type: 'boom' }, 'error');
  const more = isTyped ? sseFrame({ type: 'text', content: 'after' }) : sseFrame({ content: 'after' }, 'message');
  switch (kind) {
    case 'done':
      return done;
    case 'done-then-more':
      return done + more;
    case 'error':
      return error;
    case 'error-then-done':
      return error + done;
    case 'cut':
      return '';
    case 'cut-mid-event':
      return more.slice(0, -3);
    case 'bad-json':
      return isTyped ? 'data: {oops\n\n' : 'event: message\ndata: {oops\n\n';
    case 'oversized':
      return (isTyped ? sseFrame({ type: 'text', content: 'x'.repeat(MAX_EVENT_SIZE) }) : sseFrame({ content: 'x'.repeat(MAX_EVENT_SIZE) }, 'message')) + done;
  }
}

/** Cut points in [1, length), sorted and unique. */
function points(cuts: number[], length: number): number[] {
  return [...new Set(cuts.map((c) => 1 + (c % Math.max(1, length - 1))))].filter((c) => c < length).sort((a, b) => a - b);
}

function slices<T extends { slice(start: number, end?: number): T; length: number }>(whole: T, cuts: number[]): T[] {
  const at = [0, ...points(cuts, whole.length), whole.length];
  return at.slice(1).map((end, i) => whole.slice(at[i] ?? 0, end));
}

/** A web stream of text pieces. */
function textStreamOf(pieces: string[]): ReadableStream<string> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const piece = pieces[i++];
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
}

async function* iterableOf(pieces: Array<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const piece of pieces) yield piece;
}

/** Every form of one stream, cut at the given points (bytes anywhere, text between code points). */
function forms(text: string, cuts: number[]): Array<[string, () => StreamSource]> {
  const bytes = encoder.encode(text);
  const byteSlices = slices(bytes, cuts);
  const codePoints = Array.from(text);
  const textSlices = slices(codePoints, cuts).map((piece) => piece.join(''));
  // Text slices, every other one as bytes: the decoder switches between its two inputs.
  const mixed = textSlices.map((piece, i) => (i % 2 === 0 ? encoder.encode(piece) : piece));
  return [
    ['string', () => text],
    ['Response', () => new Response(streamOf(byteSlices), { headers: { 'content-type': 'text/event-stream' } })],
    ['ReadableStream<Uint8Array>', () => streamOf(byteSlices)],
    ['ReadableStream<string>', () => textStreamOf(textSlices)],
    ['AsyncIterable<Uint8Array>', () => iterableOf(byteSlices)],
    ['AsyncIterable<Uint8Array | string>', () => iterableOf(mixed)],
  ];
}

interface Outcome {
  events: BridgeEvent[];
  /** The error's class (compared by identity), and what it carries. */
  error?: { type: unknown; message: string; code?: unknown; line?: unknown; partial: unknown } | undefined;
}

/** The events and the failure of one read, with the partial's random id and clock left out. */
async function outcome(dialect: Dialect, source: StreamSource, signal?: AbortSignal): Promise<Outcome> {
  const events: BridgeEvent[] = [];
  try {
    for await (const event of dialect.read(source, { maxEventSize: MAX_EVENT_SIZE, signal })) events.push(event);
    return { events };
  } catch (error) {
    if (!(error instanceof Ai4tsError)) throw error;
    return {
      events,
      error: {
        type: error.constructor,
        message: error.message,
        code: error instanceof ApiError ? error.code : undefined,
        line: error instanceof ProtocolError ? error.line : undefined,
        partial: withoutClock(error.partial),
      },
    };
  }
}

/** A completion without its random id and its creation time. */
function withoutClock(partial: unknown): unknown {
  if (typeof partial !== 'object' || partial === null) return partial;
  const { id: _id, created: _created, ...rest } = { ...partial, id: undefined, created: undefined };
  return rest;
}

function expectedFailure(kind: Ending): unknown {
  switch (kind) {
    case 'done':
    case 'done-then-more':
      return undefined;
    case 'error':
    case 'error-then-done':
      return ApiError;
    case 'cut':
    case 'cut-mid-event':
      return StreamIncompleteError;
    case 'bad-json':
    case 'oversized':
      return ProtocolError;
  }
}

describe.each([
  ['typed', typedEventDialect, typedEvent],
  ['named', namedEventDialect, namedEvent],
] as const)('the %s dialect reads every source form alike', (_name, dialect, event) => {
  it('the same events, failure and partial whatever the form and the cuts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { maxLength: 12 }),
        fc.constantFrom(...ENDINGS),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.boolean(),
        async (body, kind, cuts, bom) => {
          const text = (bom ? '\uFEFF' : '') + body.join('') + ending(dialect, kind);
          const reference = await outcome(dialect, text);
          const failure = expectedFailure(kind);
          if (failure === undefined) expect(reference.error).toBeUndefined();
          else expect(reference.error?.type).toBe(failure);
          for (const [form, source] of forms(text, cuts)) {
            expect({ form, ...(await outcome(dialect, source())) }).toEqual({ form, ...reference });
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000); // 150 runs of up to 12 events in every source form: seconds alone, far more on a loaded machine

  it('an aborted signal fails every form with an AbortError and an empty partial', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const text = dialect === typedEventDialect ? sseFrame({ type: 'text', content: 'a' }) : sseFrame({ content: 'a' }, 'message');
    for (const [form, source] of forms(text, [3, 9])) {
      const result = await outcome(dialect, source(), controller.signal);
      expect({ form, type: result.error?.type, events: result.events }).toEqual({ form, type: AbortError, events: [] });
      expect(result.error?.partial).toMatchObject({ choices: [{ message: { content: null } }] });
    }
  });
});
