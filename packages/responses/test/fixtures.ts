/**
 * Responses streams shaped like the real API (field names from OpenAI's streaming event reference): each builder
 * returns the ordered event objects, numbered by `sequence_number` like the server does.
 */

export type Json = Record<string, unknown>;

export const USAGE = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 100 },
  output_tokens: 40,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 160,
};

export function baseResponse(fields: Json = {}): Json {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1_741_476_542,
    status: 'in_progress',
    model: 'gpt-5-2025-08-07',
    output: [],
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    usage: null,
    ...fields,
  };
}

/** Numbers events as the server does; `skip` leaves gaps on purpose. */
export class Script {
  readonly events: Json[] = [];
  #seq = 0;

  add(type: string, fields: Json = {}): this {
    this.events.push({ type, sequence_number: this.#seq++, ...fields });
    return this;
  }

  skip(count: number): this {
    this.#seq += count;
    return this;
  }

  start(): this {
    return this.add('response.created', { response: baseResponse() }).add('response.in_progress', {
      response: baseResponse(),
    });
  }

  /** A whole assistant message streamed as `deltas`, with optional annotations on its text. */
  message(outputIndex: number, id: string, deltas: string[], annotations: Json[] = []): this {
    const text = deltas.join('');
    const at = { item_id: id, output_index: outputIndex, content_index: 0 };
    this.add('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    this.add('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
    for (const delta of deltas) this.add('response.output_text.delta', { ...at, delta, logprobs: [] });
    annotations.forEach((annotation, annotation_index) => {
      this.add('response.output_text.annotation.added', { ...at, annotation_index, annotation });
    });
    this.add('response.output_text.done', { ...at, text, logprobs: [] });
    const part = { type: 'output_text', text, annotations };
    this.add('response.content_part.done', { ...at, part });
    return this.add('response.output_item.done', {
      output_index: outputIndex,
      item: { id, type: 'message', status: 'completed', role: 'assistant', content: [part] },
    });
  }

  /** A reasoning item whose summary has one part per entry of `parts` (each streamed as its deltas). */
  reasoning(outputIndex: number, id: string, parts: string[][]): this {
    this.add('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'reasoning', summary: [] },
    });
    parts.forEach((deltas, summary_index) => {
      const at = { item_id: id, output_index: outputIndex, summary_index };
      this.add('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      for (const delta of deltas) this.add('response.reasoning_summary_text.delta', { ...at, delta });
      const text = deltas.join('');
      this.add('response.reasoning_summary_text.done', { ...at, text });
      this.add('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    });
    const summary = parts.map((deltas) => ({ type: 'summary_text', text: deltas.join('') }));
    return this.add('response.output_item.done', {
      output_index: outputIndex,
      item: { id, type: 'reasoning', summary, encrypted_content: null },
    });
  }

  completed(output: Json[], fields: Json = {}): this {
    return this.add('response.completed', {
      response: baseResponse({ status: 'completed', output, usage: USAGE, ...fields }),
    });
  }
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status = 'completed'): Json {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

export function messageItem(id: string, text: string, annotations: Json[] = []): Json {
  return {
    id,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations }],
  };
}

/** Two function calls streamed in parallel, their argument deltas interleaved. */
export function parallelCallsScript(): Script {
  const s = new Script().start();
  const weather = ['{"city":', '"Paris"', ',"unit":"c"}'];
  const time = ['{"tz":', '"Europe/Paris"', '}'];
  s.add('response.output_item.added', {
    output_index: 0,
    item: functionCallItem('fc_1', 'call_weather', 'get_weather', '', 'in_progress'),
  });
  s.add('response.output_item.added', {
    output_index: 1,
    item: functionCallItem('fc_2', 'call_time', 'get_time', '', 'in_progress'),
  });
  for (let i = 0; i < 3; i++) {
    s.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: weather[i] });
    s.add('response.function_call_arguments.delta', { item_id: 'fc_2', output_index: 1, delta: time[i] });
  }
  const weatherArgs = weather.join('');
  const timeArgs = time.join('');
  s.add('response.function_call_arguments.done', {
    item_id: 'fc_1',
    output_index: 0,
    name: 'get_weather',
    arguments: weatherArgs,
  });
  s.add('response.output_item.done', {
    output_index: 0,
    item: functionCallItem('fc_1', 'call_weather', 'get_weather', weatherArgs),
  });
  s.add('response.function_call_arguments.done', { item_id: 'fc_2', output_index: 1, name: 'get_time', arguments: timeArgs });
  s.add('response.output_item.done', {
    output_index: 1,
    item: functionCallItem('fc_2', 'call_time', 'get_time', timeArgs),
  });
  return s.completed([
    functionCallItem('fc_1', 'call_weather', 'get_weather', weatherArgs),
    functionCallItem('fc_2', 'call_time', 'get_time', timeArgs),
  ]);
}

/** A plain text answer with a citation, after a reasoning summary in two parts. */
export function textScript(): Script {
  const citation = {
    type: 'url_citation',
    start_index: 0,
    end_index: 11,
    url: 'https://example.com/paris',
    title: 'Paris',
  };
  return new Script()
    .start()
    .reasoning(0, 'rs_1', [
      ['**Planning**', ' the answer'],
      ['**Checking**', ' the sources'],
    ])
    .message(1, 'msg_1', ['Paris is ', 'the capital', ' of France — ', 'café ☕'], [citation])
    .completed([
      {
        id: 'rs_1',
        type: 'reasoning',
        summary: [
          { type: 'summary_text', text: '**Planning** the answer' },
          { type: 'summary_text', text: '**Checking** the sources' },
        ],
      },
      messageItem('msg_1', 'Paris is the capital of France — café ☕', [citation]),
    ]);
}

/** `text` as UTF-8 bytes cut into pieces of `size` bytes (splitting multi-byte characters on purpose). */
export function chunks(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}
