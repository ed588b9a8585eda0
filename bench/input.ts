/** Shared by the *.bench.ts files: the same deterministic bytes, cut the way sockets deliver them. */

/** Deterministic PRNG (mulberry32), so every run measures the same bytes. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `bytes` cut into pieces of `min`..`max` bytes (anywhere, including inside multi-byte characters). */
export function cut(bytes: Uint8Array, min: number, max: number, random: () => number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = min + Math.floor(random() * (max - min + 1));
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

/** A body that hands out `pieces` one per read. */
export function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const piece = pieces[i++];
      if (piece) controller.enqueue(piece);
      else controller.close();
    },
  });
}

/** Best of `runs` wall times in ms. */
export async function best(runs: number, task: () => Promise<unknown>): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await task();
    min = Math.min(min, performance.now() - start);
  }
  return min;
}
