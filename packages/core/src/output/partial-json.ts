/**
 * An incremental JSON parser: it reads each delta once and keeps its state between deltas, so a whole stream costs
 * time linear in its length (the peers re-parse the whole buffer on every delta, quadratic in the length).
 *
 * Its partial value never holds what the final value does not: a string only grows, a number, `true`, `false` or
 * `null` appears only once complete (`tru` is nothing yet), an object member appears once its key is complete and
 * its value has begun, an array element once it has begun.
 *
 * Partial values are immutable and structurally shared, and cost nothing until read. Everything before the last
 * entry of an open container is complete, and a container's value is built once, when it closes; so a partial is
 * captured after a change by noting, for each open container, how many entries it has (O(depth)), and built when
 * read from those counts, the closed containers' values (shared by every later partial) and the string in
 * progress: only the open containers on the path to the change are copied.
 *
 * Reading every partial is linear too, by an amortized schedule of the partials shown. A partial is a plain
 * immutable value, so one taken while a list of k items is open costs O(k) to build (a new array), and a string in
 * progress costs its length to whoever reads its characters (V8 flattens the rope), much more per character once
 * the copy no longer fits V8's regular heap. Showing a partial after every delta would make a reader that looks at
 * each one quadratic in the length of the text. So `push` reports a change only when the cost of the partial
 * (depth, entries of the open containers, the string in progress; see the constants below) is at most
 * {@link SHOW_SLACK} + {@link SHOW_PER_CHAR} x the characters read since the last partial shown; changes in
 * between merge into the next one shown. Summed over a stream, building every partial shown costs at most
 * SHOW_SLACK x deltas + SHOW_PER_CHAR x characters. With deltas of ~10 characters, open containers of up to ~100
 * entries are shown after every change; a list of 10,000 records about every 1,250 characters; a string in
 * progress about every 1/256 of its length, every 1/8 past 64K characters. The change that completes the value is
 * always shown, and `end()` shows anything held back, so the last partial shown equals `JSON.parse` of the text.
 * (The other way, partials as persistent structures read in O(depth + change), would not give plain arrays and
 * strings: `Array.isArray`, JSON.stringify, zod and deep equality all want plain values.)
 */

/** Cost units that every partial may spend regardless of the text read since the last one (one unit: copying an array entry). */
const SHOW_SLACK = 32;
/** Cost units each character read since the last partial shown pays for. */
const SHOW_PER_CHAR = 8;
/** Copying an object member costs several array entries (V8 builds the object's shape as it goes). */
const MEMBER_COST = 4;
/**
 * Characters of the string in progress per cost unit. Building a partial does not copy the string (it is a rope),
 * but a reader of its characters does (V8 flattens the rope into a new flat string): a string field is shown
 * about every 1/256 of its length.
 */
const CHARS_PER_UNIT = 32;
/**
 * Past this many characters (128 KB of two-byte characters: V8's largest regular heap object), each flat copy a
 * reader makes is a new large object on fresh pages, a page fault every 4 KB: measured at 3-8 ns a character
 * instead of 0.1-0.2. Such a string costs a unit per character, so it is shown about every 1/8 of its length.
 */
const LARGE_STRING = 65_536;

/** What reading the string in progress costs, in units (see {@link CHARS_PER_UNIT} and {@link LARGE_STRING}). */
function stringCost(length: number): number {
  return length <= LARGE_STRING ? length / CHARS_PER_UNIT : length;
}
/**
 * A string in progress is kept as flat chunks of about this many characters (see `#pieces`): one rope node per
 * chunk, not per delta, so a long string's rope is shallow and small.
 */
const CHUNK_CHARS = 1024;
/** Keys an object looks up by scanning them before it indexes them in a Map. */
const SCANNED_KEYS = 8;

/** A container being parsed: its entries. Once closed, its built value takes its place in its parent. */
class Container {
  /** Object keys, in first-occurrence order (empty for an array). */
  readonly keys: string[] = [];
  /**
   * The entries: complete values (a closed child is its built value), a string in progress or an open child
   * container (the last entry).
   */
  readonly values: unknown[] = [];
  /**
   * Object key -> position in `values` (a repeated key replaces the value in place, as `JSON.parse` does), once
   * the object has more than {@link SCANNED_KEYS} keys: below that, scanning `keys` is cheaper than a Map per object.
   */
  #positions: Map<string, number> | undefined;
  constructor(readonly isArray: boolean) {}

  /** Sets the entry for `key` (objects) or appends one (arrays); returns its position. */
  add(key: string, value: unknown): number {
    if (this.isArray) return this.values.push(value) - 1;
    const position = this.#positions ? (this.#positions.get(key) ?? -1) : this.keys.indexOf(key);
    if (position !== -1) {
      this.values[position] = value;
      return position;
    }
    if (this.#positions) this.#positions.set(key, this.keys.length);
    else if (this.keys.length === SCANNED_KEYS) this.#positions = new Map([...this.keys, key].map((name, at) => [name, at]));
    this.keys.push(key);
    return this.values.push(value) - 1;
  }

  /**
   * The value of the first `count` entries, `last` standing for the entry at `lastAt` (an open child's partial
   * value, or a string in progress).
   */
  compose(count: number, lastAt: number, last: unknown): unknown {
    if (this.isArray) {
      const values = new Array<unknown>(count);
      for (let i = 0; i < count; i++) values[i] = i === lastAt ? last : this.values[i];
      return values;
    }
    const object: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const key = this.keys[i] as string;
      const value = i === lastAt ? last : this.values[i];
      // An own `__proto__` member, as JSON.parse makes it, not the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      else object[key] = value;
    }
    return object;
  }
}

/**
 * The open containers as captures see them, shared by every capture until a container opens or closes: a
 * container but the innermost gets no entry while its child is open, so only the innermost's count changes.
 */
interface Frame {
  readonly open: readonly Container[];
  /** The entries of each open container but the innermost. */
  readonly counts: readonly number[];
  /** Where each open container but the first sits in its parent. */
  readonly positions: readonly number[];
}

/** A partial value as captured: the open containers, the innermost's entry count, and the string in progress. */
interface Capture {
  readonly frame: Frame;
  readonly count: number;
  /** The string in progress in the innermost container, and its position; position -1 when there is none. */
  readonly leaf: string;
  readonly leafAt: number;
  /** Once read: the value of each open container (the first is the whole value). */
  built?: unknown[];
}

/** Builds a captured partial value once, innermost container first (iterative: nesting depth costs no stack). */
function materialize(capture: Capture): unknown {
  if (capture.built) return capture.built[0];
  const { open, counts, positions } = capture.frame;
  const built = new Array<unknown>(open.length);
  let child: unknown = capture.leaf;
  let childAt = capture.leafAt;
  for (let i = open.length - 1; i >= 0; i--) {
    child = (open[i] as Container).compose(counts[i] ?? capture.count, childAt, child);
    built[i] = child;
    childAt = positions[i - 1] ?? -1;
  }
  capture.built = built;
  return child;
}

/** What the parser expects next. */
const Mode = {
  /** A value must come (root, after `:` or `,` in an array). */
  Value: 0,
  /** After `[`: a value or `]`. */
  ArrayFirst: 1,
  /** After `{`: a key or `}`. */
  ObjectFirst: 2,
  /** After `,` in an object: a key. */
  Key: 3,
  /** After a key: `:`. */
  Colon: 4,
  /** After a value: `,` or the closer (only whitespace at the root). */
  After: 5,
  String: 6,
  Number: 7,
  Literal: 8,
  Failed: 9,
} as const;
type Mode = (typeof Mode)[keyof typeof Mode];

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const LITERALS: Readonly<Record<string, true | false | null>> = { true: true, false: false, null: null };
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A character a number may hold: a digit, `.`, `e`, `E`, `+`, `-` (the grammar is checked once it ends). */
function isNumberChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || code === 0x2e || code === 0x65 || code === 0x45 || code === 0x2b || code === 0x2d;
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Parses JSON text arriving in pieces. `push` each delta, read `value` (the partial value, `undefined` until
 * something is visible), call `end()` when the text is complete. Invalid JSON stops the parser: `error` says
 * why and `value` keeps the last partial.
 *
 * @example
 * const parser = new PartialJsonParser();
 * parser.push('{"name": "Ad');
 * parser.value; // { name: 'Ad' }
 */
export class PartialJsonParser {
  #mode: Mode = Mode.Value;
  #stack: Container[] = [];
  /** Where each open container but the outermost sits in its parent (parallel to `#stack`, one shorter). */
  #positions: number[] = [];
  #root: unknown = undefined;
  #hasRoot = false;
  /** The text of the token in progress: a number, a literal, or a string's first characters (see `#pieces`). */
  #token = '';
  /** A string's characters read in the current delta (an escape is one piece of its own). */
  #piece = '';
  /**
   * A string's characters read since `#token` last took them, one entry per delta, joined into one flat chunk
   * appended to `#token` every {@link CHUNK_CHARS} characters or when the string is read. Appending each delta to
   * `#token` instead grows V8's rope by a node (and keeps a piece) per delta: for a long string, all of it
   * survives, and each young-generation GC copies (promotes) it, which made parsing 2 MB of prose 9x the time
   * of 500 KB.
   */
  #pieces: string[] = [];
  /** The characters in `#pieces`. */
  #piecesLength = 0;
  #isKey = false;
  /** An escape in progress inside a string: `\`, `\u`, `\u12`, ... */
  #escape = '';
  /** Where the string in progress sits in the innermost container; -1 for none or a root string. */
  #slot = -1;
  /** The length of the string in progress as the last change saw it (a string only grows). */
  #shownLength = 0;
  /** The partial changed since the last one `push` or `end` reported. */
  #pending = false;
  /** Characters read since the last partial reported. */
  #sinceShown = 0;
  /** The cost units of copying the open containers' entries (see {@link MEMBER_COST}). */
  #openCost = 0;
  #error: string | undefined;
  /** The reader of the value as of the last change, once asked for. */
  #latest: (() => unknown) | undefined;
  /** What `#latest` reads, when the value has open containers. */
  #capture: Capture | undefined;
  /** The open containers as the captures since the last one opened or closed see them. */
  #frame: Frame | undefined;

  /** The partial value (`undefined` until something is visible); a new object after each change, the same one otherwise. */
  get value(): unknown {
    return this.partial()();
  }

  /**
   * The partial value as it is now, to read later: O(depth) to take, and built once when first read (then the same
   * object). What the stream's `object` events hold, so a change costs nothing when nobody reads it.
   */
  partial(): () => unknown {
    if (this.#latest) return this.#latest;
    let read: () => unknown;
    const top = this.#stack.at(-1);
    if (top === undefined) {
      // No open container: the root is a complete value, or a string in progress.
      const value = this.#mode === Mode.String && this.#hasRoot ? this.#text() : this.#root;
      read = () => value;
    } else {
      const inString = this.#mode === Mode.String && !this.#isKey;
      this.#frame ??= {
        open: [...this.#stack],
        counts: this.#stack.slice(0, -1).map((container) => container.values.length),
        positions: [...this.#positions],
      };
      const capture: Capture = {
        frame: this.#frame,
        count: top.values.length,
        leaf: inString ? this.#text() : '',
        leafAt: inString ? this.#slot : -1,
      };
      this.#capture = capture;
      read = () => materialize(capture);
    }
    this.#latest = read;
    return read;
  }

  /** Why the text is not JSON, once it is known not to be. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Whether a whole JSON value has been read (`end()` completes a number at the root). */
  get complete(): boolean {
    return this.#hasRoot && this.#stack.length === 0 && this.#mode === Mode.After;
  }

  /**
   * Reads one delta; returns whether there is a new partial value to show. Changes are shown as soon as the
   * schedule above allows (at once for small values), merged into the next shown otherwise; the change that
   * completes the value is always shown.
   */
  push(delta: string): boolean {
    const length = delta.length;
    let i = 0;
    while (i < length && this.#mode !== Mode.Failed) {
      if (this.#mode === Mode.String) {
        i = this.#readString(delta, i);
        continue;
      }
      if (this.#mode === Mode.Number) {
        // The number's characters in this delta join the token at once (one string, not one per digit).
        let end = i;
        while (end < length && isNumberChar(delta.charCodeAt(end))) end++;
        if (end > i) this.#token += delta.slice(i, end);
        i = end;
        if (i < length) this.#endNumber(); // the character after it is read again in the next mode
        continue;
      }
      const char = delta[i] as string;
      const code = delta.charCodeAt(i);
      if (this.#mode === Mode.Literal) {
        this.#token += char;
        i++;
        const literal = LITERALS[this.#token];
        if (literal !== undefined) {
          this.#mode = Mode.After;
          this.#place(literal);
        } else if (!'true'.startsWith(this.#token) && !'false'.startsWith(this.#token) && !'null'.startsWith(this.#token)) {
          this.#fail(`Unexpected "${this.#token}"`);
        }
        continue;
      }
      i++;
      if (isWhitespace(code)) continue;
      this.#readStructure(char);
    }
    this.#joinPiece();
    if (this.#mode === Mode.String && !this.#isKey && this.#stringLength() !== this.#shownLength) this.#change();
    this.#sinceShown += length;
    return this.#pending && (this.complete || this.#cost() <= SHOW_SLACK + SHOW_PER_CHAR * this.#sinceShown) && this.#show();
  }

  /**
   * The text is complete: a number at the root ends here. Returns whether there is a new partial value to show
   * (anything not shown yet is, even when the text is not valid JSON).
   */
  end(): boolean {
    if (this.#mode === Mode.Number) this.#endNumber();
    if (!this.complete && this.#mode !== Mode.Failed) this.#fail('Unexpected end of JSON');
    return this.#pending && this.#show();
  }

  /** What building the current partial costs a reader, in units of one array entry copied. */
  #cost(): number {
    const inString = this.#mode === Mode.String && !this.#isKey;
    return this.#stack.length + this.#openCost + (inString ? stringCost(this.#stringLength()) : 0);
  }

  #show(): true {
    this.#pending = false;
    this.#sinceShown = 0;
    return true;
  }

  #readStructure(char: string): void {
    const mode = this.#mode;
    if (mode === Mode.After) {
      const top = this.#stack.at(-1);
      if (top === undefined) this.#fail(`Unexpected "${char}" after the JSON value`);
      else if (char === ',') this.#mode = top.isArray ? Mode.Value : Mode.Key;
      else if (char === (top.isArray ? ']' : '}')) this.#close();
      else this.#fail(`Unexpected "${char}"`);
      return;
    }
    if (mode === Mode.Colon) {
      if (char === ':') this.#mode = Mode.Value;
      else this.#fail(`Expected ":", got "${char}"`);
      return;
    }
    if (mode === Mode.Key || mode === Mode.ObjectFirst) {
      if (char === '"') this.#startString(true);
      else if (char === '}' && mode === Mode.ObjectFirst) this.#close();
      else this.#fail(`Expected a key, got "${char}"`);
      return;
    }
    // Mode.Value or Mode.ArrayFirst
    if (char === ']' && mode === Mode.ArrayFirst) this.#close();
    else if (char === '"') this.#startString(false);
    else if (char === '{' || char === '[') {
      this.#open(new Container(char === '['));
      this.#mode = char === '[' ? Mode.ArrayFirst : Mode.ObjectFirst;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      this.#mode = Mode.Number;
      this.#token = char;
    } else if (char === 't' || char === 'f' || char === 'n') {
      this.#mode = Mode.Literal;
      this.#token = char;
    } else {
      this.#fail(`Unexpected "${char}"`);
    }
  }

  /** Reads string characters from `i` up to the closing quote, an escape or the delta's end; returns the next index. */
  #readString(delta: string, i: number): number {
    if (this.#escape !== '') return this.#readEscape(delta, i);
    let j = i;
    while (j < delta.length) {
      const code = delta.charCodeAt(j);
      if (code === 0x22 || code === 0x5c) break;
      if (code < 0x20) {
        this.#fail('Control character in a string');
        return delta.length;
      }
      j++;
    }
    if (j > i) this.#piece += delta.slice(i, j);
    if (j === delta.length) return j;
    if (delta.charCodeAt(j) === 0x5c) {
      this.#escape = '\\';
      return this.#readEscape(delta, j + 1);
    }
    this.#endString();
    return j + 1;
  }

  #readEscape(delta: string, i: number): number {
    while (i < delta.length) {
      const char = delta[i++] as string;
      if (this.#escape === '\\') {
        if (char === 'u') {
          this.#escape = '\\u';
          continue;
        }
        const escaped = ESCAPES[char];
        if (escaped === undefined) {
          this.#fail(`Bad escape "\\${char}"`);
          return delta.length;
        }
        this.#piece += escaped;
        this.#escape = '';
        return i;
      }
      if (!/[0-9a-fA-F]/.test(char)) {
        this.#fail(`Bad unicode escape "${this.#escape}${char}"`);
        return delta.length;
      }
      this.#escape += char;
      if (this.#escape.length === 6) {
        this.#piece += String.fromCharCode(Number.parseInt(this.#escape.slice(2), 16));
        this.#escape = '';
        return i;
      }
    }
    return i;
  }

  #startString(isKey: boolean): void {
    this.#mode = Mode.String;
    this.#isKey = isKey;
    this.#token = '';
    if (!isKey) this.#slot = this.#place('');
  }

  /** Moves the current delta's characters to `#pieces`, and a chunk's worth of pieces to `#token`. */
  #joinPiece(): void {
    if (this.#piece === '') return;
    this.#pieces.push(this.#piece);
    this.#piecesLength += this.#piece.length;
    this.#piece = '';
    if (this.#piecesLength >= CHUNK_CHARS) this.#text();
  }

  /** The string in progress so far (its pieces joined to `#token`). */
  #text(): string {
    if (this.#pieces.length > 0) {
      const [only] = this.#pieces;
      // A short string read in one delta is its one piece: no copy.
      this.#token += this.#pieces.length === 1 && only !== undefined ? only : this.#pieces.join('');
      this.#pieces.length = 0;
      this.#piecesLength = 0;
    }
    return this.#token;
  }

  #stringLength(): number {
    return this.#token.length + this.#piecesLength;
  }

  #endString(): void {
    this.#joinPiece();
    const text = this.#text();
    if (this.#isKey) {
      this.#mode = Mode.Colon;
      this.#key = text;
    } else {
      this.#mode = Mode.After;
      const top = this.#stack.at(-1);
      if (top === undefined) this.#root = text;
      else top.values[this.#slot] = text;
      if (text.length !== this.#shownLength) this.#change();
      this.#slot = -1;
    }
    this.#token = '';
  }

  /** The key the next value of the innermost object belongs to. */
  #key = '';

  #endNumber(): void {
    if (!NUMBER.test(this.#token)) {
      this.#fail(`Bad number "${this.#token}"`);
      return;
    }
    this.#mode = Mode.After;
    this.#place(Number(this.#token));
    this.#token = '';
  }

  /** Puts a value that has begun into the innermost container (or the root); returns its position there (-1: root). */
  #place(value: unknown): number {
    this.#change();
    const top = this.#stack.at(-1);
    if (top === undefined) {
      this.#root = value;
      this.#hasRoot = true;
      return -1;
    }
    const entries = top.values.length;
    const position = top.add(this.#key, value);
    if (top.values.length > entries) this.#openCost += top.isArray ? 1 : MEMBER_COST;
    return position;
  }

  #open(container: Container): void {
    const position = this.#place(container);
    if (this.#stack.length > 0) this.#positions.push(position);
    this.#stack.push(container);
    this.#frame = undefined;
  }

  /**
   * Closes the innermost container: its value is built now, once, and shared by every later partial. Closing
   * changes nothing visible: when the current partial was read, its copy of the container becomes the value, so
   * the next partial shares it.
   */
  #close(): void {
    const depth = this.#stack.length - 1;
    const container = this.#stack.pop();
    this.#frame = undefined;
    const position = this.#positions.pop();
    if (container) {
      this.#openCost -= container.values.length * (container.isArray ? 1 : MEMBER_COST);
      const built = this.#capture?.frame.open[depth] === container ? this.#capture.built?.[depth] : undefined;
      // The value replaces the container, which is dropped (a partial taken earlier keeps its own reference).
      const value = built ?? container.compose(container.values.length, -1, undefined);
      const parent = this.#stack.at(-1);
      if (parent && position !== undefined) parent.values[position] = value;
      else this.#root = value;
    }
    this.#mode = Mode.After;
  }

  #change(): void {
    this.#pending = true;
    this.#latest = undefined;
    this.#capture = undefined;
    if (this.#mode === Mode.String && !this.#isKey) this.#shownLength = this.#stringLength();
  }

  #fail(message: string): void {
    this.#mode = Mode.Failed;
    this.#error = message;
  }
}
