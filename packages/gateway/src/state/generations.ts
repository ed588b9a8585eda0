/**
 * The resumable generations in flight. Each follows its own signal rather than its client's, so that it goes on
 * when the client leaves; shutdown waits for them, and aborts those still running at its deadline.
 */

/** One generation: its signal, and `finish()` once it ended. */
export interface Generation {
  readonly signal: AbortSignal;
  finish(): void;
}

export class Generations {
  readonly #live = new Set<AbortController>();
  readonly #idle = new Set<() => void>();
  /** The generations started with a key (a stream's id), to cancel: their controller and their end. */
  readonly #keyed = new Map<string, { controller: AbortController; finished: Promise<void> }>();

  /** Starts a generation; one with a `key` can be cancelled by it. */
  start(key?: string): Generation {
    const controller = new AbortController();
    this.#live.add(controller);
    let finished: () => void = () => undefined;
    if (key !== undefined)
      this.#keyed.set(key, { controller, finished: new Promise<void>((resolve) => (finished = resolve)) });
    return {
      signal: controller.signal,
      finish: () => {
        this.#live.delete(controller);
        if (key !== undefined && this.#keyed.get(key)?.controller === controller) this.#keyed.delete(key);
        finished();
        if (this.#live.size === 0) for (const resolve of [...this.#idle]) resolve();
      },
    };
  }

  /**
   * Aborts the generation started with `key` and resolves once it ended (its stream and store written); false when
   * none runs in this process.
   */
  async cancel(key: string, reason: Error): Promise<boolean> {
    const running = this.#keyed.get(key);
    if (!running) return false;
    running.controller.abort(reason);
    await running.finished;
    return true;
  }

  /** Generations running now. */
  get size(): number {
    return this.#live.size;
  }

  /** Resolves once none runs. */
  idle(): Promise<void> {
    if (this.#live.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#idle.delete(done);
        resolve();
      };
      this.#idle.add(done);
    });
  }

  /** Aborts every generation still running. */
  abortAll(reason: Error): void {
    for (const controller of this.#live) controller.abort(reason);
  }
}
