/** A pause in a test, for a server or a client that acts on its own schedule. */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
