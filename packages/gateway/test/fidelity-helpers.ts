/**
 * The fidelity suites' setup (one scripted upstream per protocol, each behind its own gateway, for the whole file),
 * and how they read the reasoning seals an upstream request carries back.
 */
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockModelOptions, startMockModel } from '@ai4ts/testing';
import { afterAll, beforeAll } from 'vitest';

export const PROTOCOLS: readonly GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];

/** Started before the file's tests and closed after them; the map is filled once they start. */
export function gatewayPerProtocol(
  options: MockModelOptions,
  protocols: readonly GatewayProtocol[] = PROTOCOLS,
): Map<GatewayProtocol, { model: MockModel; gateway: ListeningGateway }> {
  const upstreams = new Map<GatewayProtocol, { model: MockModel; gateway: ListeningGateway }>();
  beforeAll(async () => {
    for (const protocol of protocols) {
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

export type Json = Record<string, unknown>;

export const list = (value: unknown): Json[] => (Array.isArray(value) ? value : []);

/** The reasoning seals an upstream request carries back, in the upstream's own fields (Chat has none). */
export function sealsSentBack(protocol: GatewayProtocol, body: Json): string[] {
  switch (protocol) {
    case 'chat':
      return [];
    case 'responses':
      return list(body.input)
        .filter((item) => item.type === 'reasoning')
        .map((item) => String(item.encrypted_content));
    case 'messages':
      return list(body.messages)
        .flatMap((message) => list(message.content))
        .filter((block) => block.type === 'thinking' || block.type === 'redacted_thinking')
        .map((block) => String(block.signature ?? block.data));
    case 'gemini':
      // Gemini signs a tool-calling turn on its first call: the signature travels in the call's id.
      return list(body.contents)
        .flatMap((content) => list(content.parts))
        .filter((part) => part.thoughtSignature !== undefined)
        .map((part) => String(part.thoughtSignature));
  }
}
