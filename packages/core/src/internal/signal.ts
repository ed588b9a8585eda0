/** The signal of an operation nobody can abort: lets code take a signal unconditionally. */
export const NEVER: AbortSignal = new AbortController().signal;

/**
 * Makes `controller` abort when `signal` does (with its reason, at once if it already has); returns the function
 * that stops following. What `AbortSignal.any` does, minus what it leaves behind: Node keeps a record of every
 * signal `any` made from a source for as long as the source lives (~200 bytes each on Node 22), so an app-wide
 * signal passed to every call grew with each call. Released, a follower leaves nothing on `signal`.
 */
export function follow(signal: AbortSignal | undefined, controller: AbortController): () => void {
  const abort = () => controller.abort(signal?.reason);
  if (signal?.aborted) abort();
  else signal?.addEventListener('abort', abort, { once: true });
  return () => signal?.removeEventListener('abort', abort);
}

/**
 * Runs `work` with a signal of its own that follows `signal` (see {@link follow}; none without one), released once
 * `work` settles. For calls that hand their signal to fetch: ky makes an `AbortSignal.any` of it on every request.
 */
export async function withOwnSignal<T>(
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const release = follow(signal, controller);
  try {
    return await work(signal && controller.signal);
  } finally {
    release();
  }
}
