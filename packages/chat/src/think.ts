/**
 * Streaming `<think>...</think>` extraction for models that put their reasoning inside the content
 * (some Ollama and vLLM deployments). Tags may be split across deltas: the splitter holds back at most a
 * tag's length of text that could be the start of a tag, so each delta costs time proportional to its own length.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

/** Receives the pieces of a delta in order: visible text, or reasoning when `reasoning` is true. */
export type ThinkSink = (text: string, reasoning: boolean) => void;

/** Splits content deltas into text and reasoning. One instance per choice. */
export class ThinkTagSplitter {
  /** Inside a think block. */
  #inside = false;
  /** The end of the previous delta that may be the start of a tag. */
  #held = '';
  /** Whitespace right after a tag is a separator, not text: drop it until something else arrives. */
  #trimStart = false;

  /** True when a delta with no '<' can skip the splitter (nothing held, nothing to trim). */
  get idle(): boolean {
    return this.#held === '' && !this.#trimStart;
  }

  /** The reasoning flag a delta without any tag would get. */
  get reasoning(): boolean {
    return this.#inside;
  }

  /** Splits one content delta, holding back an end that may start a tag until the next delta or {@link flush}. */
  push(delta: string, sink: ThinkSink): void {
    const s = this.#held === '' ? delta : this.#held + delta;
    this.#held = '';
    let pos = 0;
    for (;;) {
      const tag = this.#inside ? CLOSE : OPEN;
      const at = s.indexOf(tag, pos);
      if (at === -1) break;
      this.#emit(s.slice(pos, at), sink);
      this.#inside = !this.#inside;
      this.#trimStart = true;
      pos = at + tag.length;
    }
    const keep = partialTagLength(s, pos, this.#inside ? CLOSE : OPEN);
    this.#emit(s.slice(pos, s.length - keep), sink);
    if (keep > 0) this.#held = s.slice(s.length - keep);
  }

  /** End of input: text held back as a possible tag start was text after all. */
  flush(sink: ThinkSink): void {
    const held = this.#held;
    this.#held = '';
    this.#emit(held, sink);
  }

  #emit(text: string, sink: ThinkSink): void {
    if (this.#trimStart) {
      text = text.trimStart();
      if (text === '') return;
      this.#trimStart = false;
    }
    if (text !== '') sink(text, this.#inside);
  }
}

/** Length of the longest end of `s` (from `from` on) that is a proper prefix of `tag`. */
function partialTagLength(s: string, from: number, tag: string): number {
  const lt = s.lastIndexOf('<');
  if (lt < from || s.length - lt >= tag.length) return 0;
  return tag.startsWith(s.slice(lt)) ? s.length - lt : 0;
}
