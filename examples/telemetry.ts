/**
 * The `npm start` agent with OpenTelemetry on: prints every span (the loop's `invoke_agent`, each `chat {model}`
 * request, each `execute_tool {name}`) with the SDK's console exporter, then the GenAI metrics and the loop's cost.
 *
 * Offline: it answers from @ai4ts/testing's scripted model on 127.0.0.1. `--protocol=responses|messages` runs the
 * same loop over the other protocols.
 *
 *   npx tsx examples/telemetry.ts
 */
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { agentQuestion, agentScript, startMockModel } from '@ai4ts/testing';
import { createClient } from 'ai4ts';
import { convertTemperature, getWeather } from './tools.ts';

// The exporters an application would configure once; ai4ts only needs a tracer and a meter (or the global ones).
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] }).getTracer(
  'agent',
);
const metricReader = new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 });
const meters = new MeterProvider({ readers: [metricReader] });

const protocol = process.argv.find((arg) => arg.startsWith('--protocol='))?.slice('--protocol='.length) ?? 'chat';
const server = await startMockModel({ script: agentScript });
const client = createClient({
  baseURL: server.baseURL,
  apiKey: 'local-demo',
  telemetry: { tracer, meter: meters.getMeter('agent') },
  // The scripted model is free; a made-up price shows where cost appears.
  prices: { 'mock-model': { input: 0.5, output: 1.5 } },
});

try {
  const model = 'mock-model';
  const tools = [getWeather, convertTemperature];
  const question = { role: 'user' as const, content: agentQuestion };
  const result =
    protocol === 'responses'
      ? await client.responses.create({ model, input: agentQuestion, tools, maxSteps: 5 })
      : protocol === 'messages'
        ? await client.messages.create({ model, max_tokens: 1024, messages: [question], tools, maxSteps: 5 })
        : await client.chat.create({ model, messages: [question], tools, maxSteps: 5 });
  console.log(`\nAnswer: ${result.text}`);
  console.log(`Steps: ${result.steps.length}, cost: ${result.cost?.total.toFixed(6)} (per step: ${result.steps.map((step) => step.cost?.total.toFixed(6)).join(', ')})`);
  await metricReader.forceFlush();
} finally {
  await meters.shutdown();
  await server.close();
}
