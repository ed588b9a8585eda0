/**
 * `decodeFloat32Base64` against Node's own little-endian float32 writer: every bit pattern comes back exactly (NaN
 * payloads, -0, infinities, subnormals included), as a view over one buffer; anything else is a ProtocolError.
 */
import { decodeFloat32Base64, ProtocolError } from '@ai4ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** The base64 OpenAI sends: each float32's 4 bytes little-endian, written by Node (not by the code under test). */
function encodeLE(bits: readonly number[]): string {
  const bytes = Buffer.alloc(bits.length * 4);
  for (const [i, word] of bits.entries()) bytes.writeUInt32LE(word, i * 4);
  return bytes.toString('base64');
}

describe('decodeFloat32Base64', () => {
  it('gives back every float32 bit pattern exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 300 }), (bits) => {
        const decoded = decodeFloat32Base64(encodeLE(bits));
        expect(decoded).toBeInstanceOf(Float32Array);
        expect(decoded.byteOffset).toBe(0);
        expect(decoded.length).toBe(bits.length);
        expect(Array.from(new Uint32Array(decoded.buffer))).toEqual(bits);
      }),
      { numRuns: 500 },
    );
  });

  it('gives back the numbers of any float32 array, as Buffer writes them', () => {
    fc.assert(
      fc.property(fc.float32Array({ maxLength: 200 }), (values) => {
        const text = Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
        const decoded = decodeFloat32Base64(text);
        expect(decoded.length).toBe(values.length);
        for (const [i, value] of values.entries()) expect(Object.is(decoded[i], value)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses text that is not base64, and bytes that are not whole float32s', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }).filter((bytes) => bytes.length % 4 !== 0), (bytes) => {
        expect(() => decodeFloat32Base64(Buffer.from(bytes).toString('base64'))).toThrow(ProtocolError);
      }),
    );
    expect(() => decodeFloat32Base64('not base64!')).toThrow(ProtocolError);
  });
});
