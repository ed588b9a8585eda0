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

/** A ReadableStream of the given chunks, one per read, failing with `error` after them when one is given. */
export function streamOf(parts: readonly Uint8Array[], error?: unknown): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else if (error !== undefined) controller.error(error);
      else controller.close();
    },
  });
}
