/**
 * The recorded Converse streams as Bedrock sends them (AWS event-stream frames made by @smithy/eventstream-codec),
 * read through the `bedrock()` preset's framing into the listener, cut at arbitrary byte boundaries: every cut gives
 * the response of the uncut stream.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { bedrock } from '@ai4ts/core/bedrock';
import { bedrockEventFrame, concatBytes, splitAt } from '@ai4ts/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConverseResponse, ConverseStreamListener } from '../src/index.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const NAMES = readdirSync(FIXTURES).filter((name) => name.endsWith('.chunks.txt'));

function framed(name: string): Uint8Array {
  const lines = readFileSync(new URL(name, FIXTURES), 'utf8').split('\n').filter((line) => line.trim() !== '');
  return concatBytes(
    lines.map((line) => {
      const [type, payload] = Object.entries(JSON.parse(line) as Record<string, unknown>)[0] ?? [];
      return bedrockEventFrame(String(type), payload);
    }),
  );
}

async function read(parts: readonly Uint8Array[]): Promise<ConverseResponse> {
  const framing = bedrock({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x'.repeat(40) } }).streamFraming;
  if (!framing) throw new Error('bedrock() has no stream framing');
  const body = (async function* () {
    yield* parts;
  })();
  const listener = new ConverseStreamListener();
  for await (const batch of framing.decode(body, [])) for (const event of batch) listener.pushSse(event);
  return listener.end();
}

describe('recorded Converse streams as Bedrock frames', () => {
  const wholes = new Map<string, ConverseResponse>();

  it.each(NAMES)('%s: read whole', async (name) => {
    const response = await read([framed(name)]);
    expect(response.stopReason).not.toBe('');
    wholes.set(name, response);
  });

  it('any cut of any recording gives the whole stream’s response', async () => {
    for (const name of NAMES) if (!wholes.has(name)) wholes.set(name, await read([framed(name)]));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...NAMES), fc.array(fc.nat(), { maxLength: 16 }), async (name, offsets) => {
        const bytes = framed(name);
        expect(await read(splitAt(bytes, offsets.map((n) => n % (bytes.length + 1))))).toEqual(wholes.get(name));
      }),
      { seed: 30, numRuns: 200 },
    );
  });
});
