/**
 * Structured output: a zod schema in, a typed object out, shown growing as the model streams it.
 *
 * Self-contained: it runs against @ai4ts/testing's scripted model on 127.0.0.1 (no key, no network), through any
 * of the three protocols: `--protocol=chat` (the default), `--protocol=responses` or `--protocol=messages`.
 *
 *   npm run build && npx tsx examples/structured-output.ts --protocol=messages
 */
import { startMockModel } from '@ai4ts/testing';
import { Ai4ts } from 'ai4ts';
import * as z from 'zod';

const Trip = z
  .object({
    destination: z.string(),
    days: z.number().int().min(1),
    budget: z.enum(['low', 'medium', 'high']).default('medium'),
    stops: z.array(z.object({ city: z.string(), nights: z.number().int() })),
    note: z.string().optional(),
  })
  .meta({ title: 'trip', description: 'A trip plan' });

// The scripted model answers the first request with a wrong type, then with a valid plan: `repair: 1` fixes it.
const model = await startMockModel({
  script: [
    { object: { destination: 'Switzerland', days: 'five', budget: null, stops: [], note: null } },
    {
      object: {
        destination: 'Switzerland',
        days: 5,
        budget: null,
        stops: [
          { city: 'Zürich', nights: 2 },
          { city: 'Lucerne', nights: 1 },
          { city: 'Geneva', nights: 2 },
        ],
        note: 'Take the Golden Pass line between Lucerne and Montreux.',
      },
    },
  ],
});
const client = new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL });
const protocol = process.argv.find((arg) => arg.startsWith('--protocol='))?.slice('--protocol='.length) ?? 'chat';
const ask = 'Plan five days in Switzerland by train.';

const stream =
  protocol === 'responses'
    ? client.responses.stream({ model: 'mock-model', input: ask, output: Trip, repair: 1 })
    : protocol === 'messages'
      ? client.messages.stream({ model: 'mock-model', max_tokens: 1024, messages: [{ role: 'user', content: ask }], output: Trip, repair: 1 })
      : client.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: ask }], output: Trip, repair: 1 });

let shown = '';
for await (const event of stream) {
  if (event.type === 'step.start') console.log(`\n— step ${event.step}`);
  if (event.type === 'object') {
    // A partial plan: strings grow, numbers appear once complete, stops appear one by one.
    const line = `  ${event.object.destination ?? ''} · ${event.object.days ?? '?'} days · ${(event.object.stops ?? []).map((stop) => stop?.city ?? '').join(' → ')}`;
    if (line !== shown) console.log(line);
    shown = line;
  }
}
const result = await stream.final();
console.log(`\n${protocol}: ${result.steps.length} steps (the first answer was rejected and repaired), ${result.usage?.total_tokens} tokens`);
console.log(result.object); // typed: z.output<typeof Trip>, budget defaulted to 'medium'
await model.close();
