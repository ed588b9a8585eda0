/** The fidelity suites' setup: one scripted upstream per protocol, each behind its own gateway, for the whole file. */
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockModelOptions, startMockModel } from '@ai4ts/testing';
import { afterAll, beforeAll } from 'vitest';

export const PROTOCOLS: readonly GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];

/** Started before the file's tests and closed after them; the map is filled once they start. */
export function gatewayPerProtocol(options: MockModelOptions): Map<GatewayProtocol, { model: MockModel; gateway: ListeningGateway }> {
  const upstreams = new Map<GatewayProtocol, { model: MockModel; gateway: ListeningGateway }>();
  beforeAll(async () => {
    for (const protocol of PROTOCOLS) {
      const model = await startMockModel(options);
      const base = protocol === 'gemini' ? model.geminiBaseURL : model.baseURL;
      const gateway = await listenGateway({ upstream: base, upstreamProtocol: protocol, upstreamToken: 'sk-upstream-key' });
      upstreams.set(protocol, { model, gateway });
    }
  });
  afterAll(async () => {
    for (const { model, gateway } of upstreams.values()) {
      await gateway.close();
      await model.close();
    }
  });
  return upstreams;
}
