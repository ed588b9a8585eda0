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

  start(): Generation {
    const controller = new AbortController();
    this.#live.add(controller);
    return {
      signal: controller.signal,
      finish: () => {
        this.#live.delete(controller);
        if (this.#live.size === 0) for (const resolve of [...this.#idle]) resolve();
      },
    };
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
