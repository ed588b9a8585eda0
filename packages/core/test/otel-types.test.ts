/**
 * core's declarations describe OpenTelemetry with local structural types (so they compile without the optional
 * peer); the real API's objects must still fit them. Type errors here fail `npm run typecheck`.
 */
import * as api from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { TelemetryOptions } from '../src/index.js';
import { loadOtel, type OtelApi, type OtelPropagator } from '../src/internal/index.js';

describe('the local OpenTelemetry types', () => {
  it('take a real tracer, meter, context and propagator, and the API module itself', async () => {
    const options: TelemetryOptions = {
      tracer: api.trace.getTracer('app'),
      meter: api.metrics.getMeter('app'),
      parent: api.context.active(),
    };
    const w3c: api.TextMapPropagator = api.propagation;
    const propagators: OtelPropagator[] = [api.propagation, w3c];
    const module: OtelApi = api;
    expect(await loadOtel()).toBe(module);
    expect(options.tracer?.startSpan('x').end).toBeTypeOf('function');
    // No propagator is registered: the global one hands the context back.
    for (const propagator of propagators) {
      expect(propagator.extract(api.ROOT_CONTEXT, {}, api.defaultTextMapGetter)).toBe(api.ROOT_CONTEXT);
    }
  });
});
