/**
 * The parts of OpenTelemetry's API that ai4ts uses, as structural types. `@opentelemetry/api` is an optional peer:
 * a published declaration that imported its types would fail to compile (TS2307) for a TypeScript user without it
 * and with `skipLibCheck: false`. A real `Tracer`, `Meter`, `Context` or propagator from `@opentelemetry/api` 1.x
 * fits these types (a type test checks it).
 */

/** An attribute's value (`AttributeValue` in `@opentelemetry/api`). */
export type OtelAttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;

/** Span or metric attributes (`Attributes` in `@opentelemetry/api`). */
export interface OtelAttributes {
  [key: string]: OtelAttributeValue | undefined;
}

/** A trace context (`Context` in `@opentelemetry/api`): the parent spans start under. */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
  deleteValue(key: symbol): OtelContext;
}

/** The span methods ai4ts calls (`Span` in `@opentelemetry/api`). */
export interface OtelSpan {
  setAttribute(key: string, value: OtelAttributeValue): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  recordException(exception: Error): void;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/** Starts spans (`Tracer` in `@opentelemetry/api`, as `trace.getTracer(name)` returns it). */
export interface OtelTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: OtelAttributes }, context?: OtelContext): OtelSpan;
}

/** A histogram instrument (`Histogram` in `@opentelemetry/api`). */
export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

/** Creates instruments (`Meter` in `@opentelemetry/api`, as `metrics.getMeter(name)` returns it). */
export interface OtelMeter {
  createHistogram(
    name: string,
    options?: { unit?: string; description?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): OtelHistogram;
}

/** Reads a header of a carrier for a propagator (`TextMapGetter` in `@opentelemetry/api`). */
export interface OtelTextMapGetter<Carrier> {
  keys(carrier: Carrier): string[];
  get(carrier: Carrier, key: string): undefined | string | string[];
}

/** Reads a trace context from a carrier's headers (`TextMapPropagator` in `@opentelemetry/api`). */
export interface OtelPropagator {
  extract<Carrier>(context: OtelContext, carrier: Carrier, getter: OtelTextMapGetter<Carrier>): OtelContext;
}

/** The module `@opentelemetry/api` as ai4ts uses it, once loaded. */
export interface OtelApi {
  trace: { getTracer(name: string): OtelTracer; setSpan(context: OtelContext, span: OtelSpan): OtelContext };
  metrics: { getMeter(name: string): OtelMeter };
  context: { active(): OtelContext };
  propagation: OtelPropagator;
  SpanKind: { SERVER: number; CLIENT: number; INTERNAL: number };
  SpanStatusCode: { ERROR: number };
}
