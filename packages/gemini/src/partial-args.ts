/**
 * Vertex AI's streamed function-call arguments: fragments `{ jsonPath, stringValue | numberValue | boolValue |
 * nullValue, willContinue }` that build one arguments object. A string fragment with `willContinue: true` goes on in
 * the next fragment of the same path.
 */
import { setOwn } from '@ai4ts/core/internal';
import type { PartialArg } from './types.js';

type Segment = string | number;

/** Builds the arguments of one streamed call from its fragments, exactly: strings joined, values set at their path. */
export class ArgsBuilder {
  #root: Record<string, unknown>;
  /** The path of a string that continues in the next fragment. */
  #continuing: string | undefined;

  constructor(initial: Record<string, unknown> | undefined) {
    this.#root = structuredClone(initial ?? {});
  }

  /** The arguments so far. */
  value(): Record<string, unknown> {
    return this.#root;
  }

  /** Applies one fragment; throws Error for a path it cannot read or that runs through a value. */
  apply(arg: PartialArg): void {
    if (typeof arg.jsonPath !== 'string') throw new Error('a fragment without jsonPath');
    const segments = parsePath(arg.jsonPath);
    const value = fragmentValue(arg);
    const continued = this.#continuing === arg.jsonPath;
    this.#continuing = typeof arg.stringValue === 'string' && arg.willContinue === true ? arg.jsonPath : undefined;
    if (value === NONE || segments.length === 0) return;
    const last = segments[segments.length - 1] as Segment;
    const parent = containerAt(this.#root, segments);
    const before = Object.hasOwn(parent, last) ? (parent as Record<Segment, unknown>)[last] : undefined;
    const next = continued && typeof before === 'string' && typeof value === 'string' ? before + value : value;
    setOwn(parent as Record<string, unknown>, String(last), next);
  }
}

const NONE = Symbol('none');

function fragmentValue(arg: PartialArg): unknown {
  if (typeof arg.stringValue === 'string') return arg.stringValue;
  if (typeof arg.numberValue === 'number') return arg.numberValue;
  if (typeof arg.boolValue === 'boolean') return arg.boolValue;
  if ('nullValue' in arg) return null;
  return NONE;
}

/** `$.a.b[0]['c d']` as `['a', 'b', 0, 'c d']`. */
function parsePath(path: string): Segment[] {
  if (!path.startsWith('$')) throw new Error(`jsonPath "${path}" does not start at $`);
  const segments: Segment[] = [];
  const pattern = /\.([^.[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;
  pattern.lastIndex = 1;
  while (pattern.lastIndex < path.length) {
    const match = pattern.exec(path);
    if (!match) throw new Error(`jsonPath "${path}" is not a path`);
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else segments.push((match[3] ?? match[4] ?? '').replace(/\\(.)/g, '$1'));
  }
  return segments;
}

/** The object or array that holds the last segment, made on the way (an array for a numeric segment). */
function containerAt(root: Record<string, unknown>, segments: readonly Segment[]): object {
  let current: object = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const key = segments[i] as Segment;
    const childIsArray = typeof segments[i + 1] === 'number';
    const holder = current as Record<string, unknown>;
    let child = Object.hasOwn(holder, key) ? holder[key] : undefined;
    if (child === undefined) {
      child = childIsArray ? [] : {};
      setOwn(holder, String(key), child);
    }
    if (typeof child !== 'object' || child === null) throw new Error(`the path runs through a value at "${String(key)}"`);
    current = child;
  }
  return current;
}
