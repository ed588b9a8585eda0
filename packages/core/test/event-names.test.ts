/**
 * The stream event names are complete by construction: a type of the StreamEvent union the record does not list,
 * or a switch over the union without its case, fails to compile. The `@ts-expect-error` lines are the proof: were
 * they to compile, `npm run typecheck` fails on the unused directive.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { STREAM_EVENT_NAMES, type StreamEvent } from '../src/index.js';
import { assertNever, isStreamEventType, STREAM_EVENT_TYPES } from '../src/internal/index.js';

/** The union with one more event, as a new stream event type would be before the record lists it. */
type WithNewEvent = StreamEvent | { type: 'citation'; text: string };

describe('the stream event names', () => {
  it('are the keys of one record over every StreamEvent type, in the order a listener forwards them', () => {
    expectTypeOf<keyof typeof STREAM_EVENT_TYPES>().toEqualTypeOf<StreamEvent['type']>();
    expectTypeOf(STREAM_EVENT_NAMES).toEqualTypeOf<readonly StreamEvent['type'][]>();
    expect(STREAM_EVENT_NAMES).toEqual([
      'content',
      'reasoning',
      'tool_call.start',
      'tool_call.delta',
      'tool_call.done',
      'usage',
      'finish',
    ]);
  });

  it('fail to compile when the union has a type the record does not list', () => {
    STREAM_EVENT_TYPES satisfies Record<StreamEvent['type'], true>;
    // @ts-expect-error 'citation' is missing from the record
    STREAM_EVENT_TYPES satisfies Record<WithNewEvent['type'], true>;
  });

  it('tell a stream event type from any other name', () => {
    for (const name of STREAM_EVENT_NAMES) expect(isStreamEventType(name)).toBe(true);
    for (const name of ['error', 'retry', 'tool.result', 'toString', '__proto__']) expect(isStreamEventType(name)).toBe(false);
  });
});

describe('assertNever', () => {
  const describeEvent = (event: StreamEvent): string => {
    switch (event.type) {
      case 'content':
      case 'reasoning':
        return event.delta;
      case 'tool_call.start':
      case 'tool_call.delta':
      case 'tool_call.done':
        return event.id;
      case 'usage':
        return String(event.usage.total_tokens);
      case 'finish':
        return event.finishReason;
      default:
        return assertNever(event);
    }
  };

  it('compiles as the default of a switch that covers the union, and fails to once a case is missing', () => {
    expect(describeEvent({ type: 'finish', finishReason: 'stop', choice: 0 })).toBe('stop');
    const missingCitation = (event: WithNewEvent): string => {
      switch (event.type) {
        case 'citation':
          return event.text;
        default:
          // @ts-expect-error the StreamEvent types have no case here: `event` is not never
          return assertNever(event);
      }
    };
    // Where the types were lied to, it throws with the value no case took.
    expect(() => missingCitation({ type: 'finish', finishReason: 'stop', choice: 0 })).toThrow(
      new TypeError('No case for {"type":"finish","finishReason":"stop","choice":0}'),
    );
  });
});
