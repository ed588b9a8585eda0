/** The names the gateway had in `@ai4ts/bridge`, kept for one release so that a move of the import is the only change. */
import type { GatewayOptions } from './context.js';
import { createGateway, type Gateway } from './gateway.js';
import { type ListeningGateway, listenGateway } from './http/listen.js';

/** @deprecated Use {@link createGateway}; this name goes in the next major release. */
export const createOpenAIProxy: typeof createGateway = createGateway;

/** @deprecated Use {@link listenGateway}; this name goes in the next major release. */
export const listenOpenAIProxy: typeof listenGateway = listenGateway;

/** @deprecated Use {@link GatewayOptions}; this name goes in the next major release. */
export type OpenAIProxyOptions = GatewayOptions;

/** @deprecated Use {@link Gateway}; this name goes in the next major release. */
export type OpenAIProxy = Gateway;

/** @deprecated Use {@link ListeningGateway}; this name goes in the next major release. */
export type ListeningProxy = ListeningGateway;
