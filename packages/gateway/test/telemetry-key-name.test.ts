/**
 * The request span carries the virtual key's name that the access-log entry holds (`keyName`, filled by the keys
 * feature), and the upstream chosen; never the key itself. Read with the OpenTelemetry SDK's in-memory exporter.
 */
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { AccessLogEntry } from '../src/http/access-log.js';
import type { Incoming } from '../src/http/incoming.js';
import { GatewayTelemetry } from '../src/telemetry.js';

const KEY = 'ai4ts-vk-secret-0123456789abcdef';

describe('the request span', () => {
  it('names the key and the upstream of the entry, and holds no key', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const meter = new MeterProvider().getMeter('test');
    const telemetry = await GatewayTelemetry.load({ tracer, meter, propagator: new W3CTraceContextPropagator() });
    const request: Incoming = {
      method: 'POST',
      path: '/v1/chat/completions',
      query: new URLSearchParams(),
      scheme: 'http',
      header: (name) => (name === 'authorization' ? `Bearer ${KEY}` : undefined),
      text: async () => '{}',
    };
    const entry: AccessLogEntry = {
      time: new Date(0).toISOString(),
      requestId: 'req-1',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      durationMs: 5,
      upstream: 'chat@api.example.com',
      keyName: 'ci',
    };
    telemetry.startRequest(request, '/v1/chat/completions').end(entry);
    telemetry.startRequest(request, '/v1/chat/completions').end({ ...entry, keyName: undefined });
    const [named, anonymous] = exporter.getFinishedSpans();
    expect(named?.attributes['ai4ts.gateway.key_name']).toBe('ci');
    expect(named?.attributes['ai4ts.gateway.upstream']).toBe('chat@api.example.com');
    expect(anonymous?.attributes).not.toHaveProperty('ai4ts.gateway.key_name');
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain(KEY);
  });
});
