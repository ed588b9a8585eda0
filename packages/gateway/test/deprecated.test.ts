/** The names the gateway had in @ai4ts/bridge still work for one release: the same functions under the old names. */
import {
  createGateway,
  createOpenAIProxy,
  type Gateway,
  type GatewayOptions,
  type ListeningGateway,
  type ListeningProxy,
  listenGateway,
  listenOpenAIProxy,
  type OpenAIProxy,
  type OpenAIProxyOptions,
} from '@ai4ts/gateway';
import { describe, expect, expectTypeOf, it } from 'vitest';

describe('deprecated aliases', () => {
  it('are the gateway functions and types under their old names', () => {
    expect(createOpenAIProxy).toBe(createGateway);
    expect(listenOpenAIProxy).toBe(listenGateway);
    expectTypeOf<OpenAIProxyOptions>().toEqualTypeOf<GatewayOptions>();
    expectTypeOf<OpenAIProxy>().toEqualTypeOf<Gateway>();
    expectTypeOf<ListeningProxy>().toEqualTypeOf<ListeningGateway>();
  });

  it('the old upstream timeout names are read when the new ones are absent, and refused the same way', () => {
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', dialect: 'typed', upstreamTimeouts: { idleMs: -1 } })).toThrow(
      'upstreamTimeouts.idleMs must be 0 or more',
    );
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', dialect: 'typed', upstreamTimeouts: { idle: -1 } })).toThrow(
      'upstreamTimeouts.idle must be 0 or more',
    );
  });
});
