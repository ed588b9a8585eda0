/** Bytes (or text) cut into chunks and served as a web stream, the way a network delivers a body. */

/** Cuts `input` at the given positions (any order, duplicates and out-of-range ones allowed). */
export function splitAt<T extends Uint8Array | string>(input: T, cuts: readonly number[]): T[] {
  const points = [...new Set(cuts.map((c) => Math.max(0, Math.min(input.length, c))))].sort((a, b) => a - b);
  const parts: T[] = [];
  let from = 0;
  for (const point of [...points, input.length]) {
    parts.push(input.slice(from, point) as T);
    from = point;
  }
  return parts;
}

/**
 * A ReadableStream of the given chunks, one per read (text as UTF-8, an empty chunk too), failing with `error` after
 * them when one is given.
 */
export function streamOf(parts: readonly (Uint8Array | string)[], error?: unknown): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const part = parts[i++];
      if (part !== undefined) controller.enqueue(typeof part === 'string' ? encoder.encode(part) : part);
      else if (error !== undefined) controller.error(error);
      else controller.close();
    },
  });
}

/** Every item an async iterable yields, and the error it threw if it threw one. */
export async function drain<T>(items: AsyncIterable<T>): Promise<{ events: T[]; error?: unknown }> {
  const events: T[] = [];
  try {
    for await (const item of items) events.push(item);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** The body reader of a response that must have a body. */
export function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  if (!response.body) throw new Error('The response has no body');
  return response.body.getReader();
}
