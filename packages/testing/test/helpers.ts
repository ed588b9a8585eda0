import { parseSse } from '@ai4ts/sse';
import { type MockModel, type MockModelOptions, startMockModel } from '@ai4ts/testing';
import { afterEach } from 'vitest';

/**
 * A `start(options)` for one test file: each call closes the model before it, and the last one is closed after
 * each test.
 */
export function mockModels(): (options: MockModelOptions) => Promise<MockModel> {
  let model: MockModel | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });
  return async (options) => {
    await model?.close();
    model = await startMockModel(options);
    return model;
  };
}

/** POSTs a JSON body to a route of the mock model (`path` after `/v1`). */
export function post(model: MockModel, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${model.baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A decoded SSE event: its `event:` name and its JSON data. */
export interface WireEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Reads a whole SSE answer with @ai4ts/sse, parsing each data field as JSON. */
export async function readEvents(response: Response): Promise<WireEvent[]> {
  const events: WireEvent[] = [];
  for await (const { event, data } of parseSse(response)) events.push({ event, data: JSON.parse(data) });
  return events;
}

/** A nested field of a decoded event, for assertions on shapes the tests do not type. */
export function field(value: unknown, ...keys: (string | number)[]): unknown {
  let current = value;
  for (const key of keys) current = typeof current === 'object' && current !== null ? Reflect.get(current, key) : undefined;
  return current;
}

/** The string at a path, or '' when absent. */
export function text(value: unknown, ...keys: (string | number)[]): string {
  const found = field(value, ...keys);
  return typeof found === 'string' ? found : '';
}
