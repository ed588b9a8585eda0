/**
 * `@ai4ts/test-kit`: what the packages' tests share, so each helper exists once. Private: tests import these
 * sources (a vitest alias and a tsconfig path), nothing builds or publishes them.
 */
export {
  closeAll,
  closed,
  type RequestHandler,
  SSE_HEADERS,
  sendSse,
  serve,
  type ServeOptions,
  startSse,
  type TestServer,
} from './server.js';
export { sseFrame, sseText } from './sse.js';
export { drain, readerOf, splitAt, streamOf } from './stream.js';
export { seededRandom } from './random.js';
export { sleep } from './sleep.js';
export { expectMonotone, within } from './within.js';
export { describeStreamHandle, dripped, firstContent, type HandleCases } from './handle-suite.js';
export {
  bedrockEventFrame,
  bedrockExceptionFrame,
  concatBytes,
  eventStreamFrame,
  Int64,
  type MessageHeaders,
} from './event-stream.js';
