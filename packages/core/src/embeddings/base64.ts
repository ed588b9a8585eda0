/**
 * Base64 vectors (`encoding_format: "base64"`): little-endian float32s, decoded into one fresh buffer and viewed as a
 * `Float32Array` without another copy. `atob` rather than Buffer: core runs in browsers and edge runtimes.
 */
import { ProtocolError } from '../errors.js';

/** Whether this platform stores a float32 the way the wire does (true on every common CPU). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The float32s a base64 text holds, as a view over the decoded bytes (a fresh buffer, so offset 0 is aligned).
 *
 * @throws ProtocolError when the text is not base64 or its bytes are not a whole number of float32s.
 */
export function decodeFloat32Base64(text: string): Float32Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch (cause) {
    throw new ProtocolError('An embedding is not valid base64', { cause, line: text });
  }
  if (binary.length % 4 !== 0) {
    throw new ProtocolError(`A base64 embedding holds ${binary.length} bytes, not a whole number of float32s`, { line: text });
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  }
  return new Float32Array(bytes.buffer);
}

