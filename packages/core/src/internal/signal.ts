/** The signal of an operation nobody can abort: lets code take a signal unconditionally. */
export const NEVER: AbortSignal = new AbortController().signal;
