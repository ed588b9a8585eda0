/**
 * Deterministic fragmenting: the same seed cuts the same text the same way, so a failing test replays exactly.
 */

/** A seeded pseudo-random generator in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Cuts text into pieces of `min`..`max` code points at random places (never inside a surrogate pair, but
 * anywhere inside an ASCII escape such as `\u00fc`). The pieces join back to the text.
 */
export function splitText(text: string, random: () => number, min: number, max: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let at = 0; at < points.length; ) {
    const size = min + Math.floor(random() * (max - min + 1));
    pieces.push(points.slice(at, at + size).join(''));
    at += size;
  }
  return pieces;
}

/** JSON with every non-ASCII character written as a `\uXXXX` escape, the way many providers stream arguments. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
