/**
 * Responses and Messages answers are sequences of blocks (output items, content blocks), one open at a time, while
 * the normalized events interleave: Chat Completions streams the arguments of parallel tool calls mixed. The
 * sequencer turns events into block operations in an order both protocols accept: one block is open; the others
 * wait with what they received, and are sent, whole so far, when their turn comes. Text and reasoning are live, as
 * is the first of parallel tool calls; the next calls follow as soon as the one before is complete.
 */
import { type BridgeEvent, CompletionBuilder } from '@ai4ts/bridge';
import { type Seal, sealOf, type WriteOptions } from './neutral.js';

/** What a block holds. */
export type BlockKind = 'reasoning' | 'text' | 'tool';

/** One block of the answer; `index` is its position in the answer, given when it opens. */
export interface Block {
  kind: BlockKind;
  index: number;
  /** The text, reasoning, or tool argument string so far. */
  text: string;
  /** Tool calls: the call id and the tool's name. */
  id: string;
  name: string;
  /** Reasoning: the upstream's seal of it, when it gave one (a redacted block is its seal alone). */
  seal: Seal | undefined;
  /** Nothing more will come for it. */
  done: boolean;
}

/** What a writer does next. */
export type BlockOp =
  | { op: 'open'; block: Block }
  | { op: 'delta'; block: Block; delta: string }
  | { op: 'seal'; block: Block; seal: Seal }
  | { op: 'close'; block: Block };

/** See the file comment. `push` each event, then `finish()` once the events ended well. */
export class BlockSequencer {
  #open: Block | undefined;
  readonly #waiting: Block[] = [];
  readonly #calls = new Map<string, Block>();
  #opened = 0;
  /** Every block, in the order it opened: the aggregated answer's content. */
  readonly blocks: Block[] = [];

  /** The operations one event leads to. Tool call events are ignored when `tools` is false (a daemon ran them). */
  push(event: BridgeEvent, tools = true): BlockOp[] {
    const ops: BlockOp[] = [];
    switch (event.type) {
      case 'content':
        this.#text('text', event.delta, ops);
        break;
      case 'reasoning':
        this.#text('reasoning', event.delta, ops);
        break;
      case 'reasoning.signature': {
        const seal = sealOf(event);
        const signed = seal.redacted
          ? undefined
          : [this.#open, ...this.#waiting].findLast((b) => b?.kind === 'reasoning' && b.seal === undefined);
        if (signed) {
          signed.seal = seal;
          if (signed === this.#open) ops.push({ op: 'seal', block: signed, seal });
          break;
        }
        // Redacted reasoning, or a seal with no text before it (an encrypted reasoning item without a summary): a
        // block of its own, complete as it opens.
        const block = newBlock('reasoning', '', '');
        block.seal = seal;
        block.done = true;
        this.#enter(block, ops);
        if (block === this.#open) this.#close(ops);
        break;
      }
      case 'tool_call.start': {
        if (!tools) break;
        const block = newBlock('tool', event.id, event.name);
        this.#calls.set(event.id, block);
        this.#enter(block, ops);
        break;
      }
      case 'tool_call.delta': {
        const block = tools ? this.#calls.get(event.id) : undefined;
        if (!block) break;
        block.text += event.delta;
        if (block === this.#open) ops.push({ op: 'delta', block, delta: event.delta });
        break;
      }
      case 'tool_call.done': {
        if (!tools) break;
        let block = this.#calls.get(event.id);
        if (!block) {
          block = newBlock('tool', event.id, event.name);
          this.#calls.set(event.id, block);
          this.#enter(block, ops);
        }
        // The done event carries the whole string: what the deltas missed (an upstream that sent none) goes now.
        if (event.arguments.startsWith(block.text) && event.arguments !== block.text) {
          const rest = event.arguments.slice(block.text.length);
          block.text = event.arguments;
          if (block === this.#open) ops.push({ op: 'delta', block, delta: rest });
        }
        block.done = true;
        if (block === this.#open) {
          this.#close(ops);
          this.#next(ops);
        }
        break;
      }
    }
    return ops;
  }

  /** Closes the open block and sends every waiting one: the events ended well. */
  finish(): BlockOp[] {
    const ops: BlockOp[] = [];
    for (const block of this.#waiting) block.done = true;
    this.#close(ops);
    this.#next(ops);
    this.#close(ops);
    return ops;
  }

  #text(kind: 'text' | 'reasoning', delta: string, ops: BlockOp[]): void {
    const open = this.#open;
    // Reasoning after a seal is the next block of reasoning: the seal is the block's before it.
    if (open?.kind === kind && open.seal === undefined && this.#waiting.length === 0) {
      open.text += delta;
      ops.push({ op: 'delta', block: open, delta });
      return;
    }
    if (open?.kind === 'tool') {
      // A call is still streaming its arguments: the text waits behind it.
      const last = this.#waiting.at(-1);
      if (last?.kind === kind && !last.done && last.seal === undefined) last.text += delta;
      else {
        if (last && last.kind !== 'tool') last.done = true;
        const block = newBlock(kind, '', '');
        block.text = delta;
        this.#waiting.push(block);
      }
      return;
    }
    const block = newBlock(kind, '', '');
    this.#enter(block, ops);
    block.text += delta;
    ops.push({ op: 'delta', block, delta });
  }

  /** A new block: opened now unless a tool call is open, then it waits. An open text or reasoning block ends here. */
  #enter(block: Block, ops: BlockOp[]): void {
    if (this.#open?.kind === 'tool') {
      const last = this.#waiting.at(-1);
      if (last && last.kind !== 'tool') last.done = true;
      this.#waiting.push(block);
      return;
    }
    this.#close(ops);
    this.#start(block, ops);
  }

  #start(block: Block, ops: BlockOp[]): void {
    block.index = this.#opened++;
    this.#open = block;
    this.blocks.push(block);
    ops.push({ op: 'open', block });
  }

  #close(ops: BlockOp[]): void {
    const open = this.#open;
    if (!open) return;
    open.done = true;
    this.#open = undefined;
    ops.push({ op: 'close', block: open });
  }

  /** Opens the waiting blocks in order, each with what it holds; stops at the first that is not complete. */
  #next(ops: BlockOp[]): void {
    while (!this.#open) {
      const block = this.#waiting.shift();
      if (!block) return;
      this.#start(block, ops);
      if (block.text) ops.push({ op: 'delta', block, delta: block.text });
      if (block.seal !== undefined && !block.seal.redacted) ops.push({ op: 'seal', block, seal: block.seal });
      if (block.done) this.#close(ops);
    }
  }
}

function newBlock(kind: BlockKind, id: string, name: string): Block {
  return { kind, index: -1, text: '', id, name, seal: undefined, done: false };
}

/** What a block writer folds: the answer's state (usage, finish reason) and its blocks. */
export interface BlockAnswer {
  state: CompletionBuilder;
  blocks: BlockSequencer;
}

/** A new answer for `options`. */
export function blockAnswer(options: WriteOptions): BlockAnswer {
  return {
    state: new CompletionBuilder({ model: options.model, toolCalls: options.toolCalls }),
    blocks: new BlockSequencer(),
  };
}

/** Folds the events into `answer`, yielding the block operations of each event that has some; throws their failure. */
export async function* blockSteps(
  events: AsyncIterable<BridgeEvent>,
  options: WriteOptions,
  answer: BlockAnswer,
): AsyncGenerator<BlockOp[]> {
  for await (const event of events) {
    if (event.type === 'error') throw event.error;
    answer.state.add(event);
    const ops = answer.blocks.push(event, options.toolCalls === 'client');
    if (ops.length) yield ops;
  }
}

/** Every event folded and the blocks finished: an aggregated answer's content and state. */
export async function foldBlocks(events: AsyncIterable<BridgeEvent>, options: WriteOptions): Promise<BlockAnswer> {
  const answer = blockAnswer(options);
  for await (const _ of blockSteps(events, options, answer));
  answer.blocks.finish();
  return answer;
}
