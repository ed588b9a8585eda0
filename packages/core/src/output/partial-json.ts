/**
 * An incremental JSON parser: it reads each delta once and keeps its state between deltas, so a whole stream costs
 * time linear in its length (the peers re-parse the whole buffer on every delta, quadratic in the length).
 *
 * Its partial value never holds what the final value does not: a string only grows, a number, `true`, `false` or
 * `null` appears only once complete (`tru` is nothing yet), an object member appears once its key is complete and
 * its value has begun, an array element once it has begun. The value is immutable and structurally shared: reading
 * it after a change copies only the containers on the path to the change, and every other subtree is the same
 * object as in the previous value.
 */

/** A container being parsed: its entries, and the immutable value last built from them. */
class Container {
  /** Object keys, in first-occurrence order (empty for an array). */
  readonly keys: string[] = [];
  /** The entries: a finished or partial primitive, or a nested container. */
  readonly values: unknown[] = [];
  /** Object key -> position in `values` (a repeated key replaces the value in place, as `JSON.parse` does). */
  readonly positions: Map<string, number> | undefined;
  /** Changed since `snapshot` was built. */
  dirty = true;
  snapshot: unknown = undefined;

  constructor(
    readonly isArray: boolean,
    readonly parent: Container | undefined,
  ) {
    this.positions = isArray ? undefined : new Map();
  }

  /** Sets the entry for `key` (objects) or appends one (arrays); returns its position. */
  add(key: string, value: unknown): number {
    if (this.positions === undefined) return this.values.push(value) - 1;
    const position = this.positions.get(key);
    if (position !== undefined) {
      this.values[position] = value;
      return position;
    }
    this.positions.set(key, this.values.length);
    this.keys.push(key);
    return this.values.push(value) - 1;
  }

  /**
   * The immutable value: rebuilt when dirty, reusing every clean child's own value. Iterative (children first),
   * so nesting depth costs no stack.
   */
  build(): unknown {
    if (!this.dirty) return this.snapshot;
    const order: Container[] = [];
    const pending: Container[] = [this];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      order.push(next);
      for (const value of next.values) if (value instanceof Container && value.dirty) pending.push(value);
    }
    for (let i = order.length - 1; i >= 0; i--) order[i]?.compose();
    return this.snapshot;
  }

  /** Builds this container's value from its entries; its dirty children are built already. */
  compose(): void {
    this.dirty = false;
    const values = this.values.map((value) => (value instanceof Container ? value.snapshot : value));
    if (this.isArray) {
      this.snapshot = values;
      return;
    }
    const object: Record<string, unknown> = {};
    this.keys.forEach((key, i) => {
      // An own `__proto__` member, as JSON.parse makes it, not the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value: values[i], enumerable: true, writable: true, configurable: true });
      else object[key] = values[i];
    });
    this.snapshot = object;
  }
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
  #root: unknown = undefined;
  #hasRoot = false;
  /** The text of the token in progress: a string's characters, a number, a literal. */
  #token = '';
  #isKey = false;
  /** An escape in progress inside a string: `\`, `\u`, `\u12`, ... */
  #escape = '';
  /** Where the string in progress sits: its container and position (undefined for a root string). */
  #slot: { container: Container; position: number } | undefined;
  #changed = false;
  #error: string | undefined;

  /** The partial value; a new object after each change, the same one otherwise. */
  get value(): unknown {
    return this.#root instanceof Container ? this.#root.build() : this.#root;
  }

  /** Why the text is not JSON, once it is known not to be. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Whether a whole JSON value has been read (`end()` completes a number at the root). */
  get complete(): boolean {
    return this.#hasRoot && this.#stack.length === 0 && this.#mode === Mode.After;
  }

  /** Reads one delta; returns whether the partial value changed. */
  push(delta: string): boolean {
    this.#changed = false;
    const length = delta.length;
    let i = 0;
    while (i < length && this.#mode !== Mode.Failed) {
      if (this.#mode === Mode.String) {
        i = this.#readString(delta, i);
        continue;
      }
      const char = delta[i] as string;
      const code = delta.charCodeAt(i);
      if (this.#mode === Mode.Number) {
        if ((code >= 0x30 && code <= 0x39) || char === '.' || char === 'e' || char === 'E' || char === '+' || char === '-') {
          this.#token += char;
          i++;
          continue;
        }
        this.#endNumber();
        continue; // `char` is read again in the next mode
      }
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
    if (this.#mode === Mode.String && !this.#isKey) this.#updateString();
    return this.#changed;
  }

  /** The text is complete: a number at the root ends here. Returns whether the partial value changed. */
  end(): boolean {
    this.#changed = false;
    if (this.#mode === Mode.Number) this.#endNumber();
    if (!this.complete && this.#mode !== Mode.Failed) this.#fail('Unexpected end of JSON');
    return this.#changed;
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
      const container = new Container(char === '[', this.#stack.at(-1));
      this.#place(container);
      this.#stack.push(container);
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
    if (j > i) this.#token += delta.slice(i, j);
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
        this.#token += escaped;
        this.#escape = '';
        return i;
      }
      if (!/[0-9a-fA-F]/.test(char)) {
        this.#fail(`Bad unicode escape "${this.#escape}${char}"`);
        return delta.length;
      }
      this.#escape += char;
      if (this.#escape.length === 6) {
        this.#token += String.fromCharCode(Number.parseInt(this.#escape.slice(2), 16));
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

  #endString(): void {
    if (this.#isKey) {
      this.#mode = Mode.Colon;
      this.#key = this.#token;
    } else {
      this.#mode = Mode.After;
      this.#updateString();
      this.#slot = undefined;
    }
    this.#token = '';
  }

  /** The key the next value of the innermost object belongs to. */
  #key = '';

  /** Shows the string in progress, as far as it has come. */
  #updateString(): void {
    const slot = this.#slot;
    if (slot === undefined) {
      if (this.#root === this.#token) return;
      this.#root = this.#token;
    } else {
      if (slot.container.values[slot.position] === this.#token) return;
      slot.container.values[slot.position] = this.#token;
      this.#touch(slot.container);
    }
    this.#changed = true;
  }

  #endNumber(): void {
    if (!NUMBER.test(this.#token)) {
      this.#fail(`Bad number "${this.#token}"`);
      return;
    }
    this.#mode = Mode.After;
    this.#place(Number(this.#token));
    this.#token = '';
  }

  /** Puts a value that has begun into the innermost container (or the root); returns where it went. */
  #place(value: unknown): { container: Container; position: number } | undefined {
    this.#changed = true;
    const top = this.#stack.at(-1);
    if (top === undefined) {
      this.#root = value;
      this.#hasRoot = true;
      return undefined;
    }
    const position = top.add(this.#key, value);
    this.#touch(top);
    return { container: top, position };
  }

  #close(): void {
    this.#stack.pop();
    this.#mode = Mode.After;
  }

  /** Marks a container and its ancestors changed; stops at one already marked (so a change costs O(1) amortized). */
  #touch(container: Container | undefined): void {
    while (container !== undefined && !container.dirty) {
      container.dirty = true;
      container = container.parent;
    }
  }

  #fail(message: string): void {
    this.#mode = Mode.Failed;
    this.#error = message;
  }
}
