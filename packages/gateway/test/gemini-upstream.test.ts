/** The gateway has no Gemini codec yet: a route to the gemini preset is refused at startup, by name. */
import { listenGateway } from '@ai4ts/gateway';
import { describe, expect, it } from 'vitest';

describe('a gemini upstream', () => {
  it('is refused at startup with a clear error, not at the first request', async () => {
    await expect(listenGateway({ provider: 'gemini', upstreamToken: 'AIza-test' })).rejects.toThrow(
      /gemini preset speaks Gemini's native API, which the gateway cannot translate yet/,
    );
  });
});
