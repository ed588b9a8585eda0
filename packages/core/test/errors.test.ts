import { AbortError, Ai4tsError, ApiError, AuthenticationError, BadRequestError, ConnectionError, ProtocolError, RateLimitError, ServerError, StreamIncompleteError, TimeoutError, ToolError } from '@ai4ts/core';
import { readProviderError, retryAfterMs, truncate } from '@ai4ts/core/internal';
import { describe, expect, it } from 'vitest';

describe('error hierarchy', () => {
  it('roots every error at Ai4tsError with its own name', () => {
    const errors: [Ai4tsError, string][] = [
      [new ApiError('x'), 'ApiError'],
      [new AuthenticationError('x'), 'AuthenticationError'],
      [new RateLimitError('x'), 'RateLimitError'],
      [new ServerError('x'), 'ServerError'],
      [new BadRequestError('x'), 'BadRequestError'],
      [new ConnectionError('x'), 'ConnectionError'],
      [new TimeoutError('idle', 5), 'TimeoutError'],
      [new AbortError('x'), 'AbortError'],
      [new StreamIncompleteError('x'), 'StreamIncompleteError'],
      [new ProtocolError('x'), 'ProtocolError'],
      [new ToolError('x', { toolName: 't' }), 'ToolError'],
    ];
    for (const [error, name] of errors) {
      expect(error).toBeInstanceOf(Ai4tsError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(String(error)).toBe(`${name}: ${error.message}`);
    }
    expect(new RateLimitError('x')).toBeInstanceOf(ApiError);
  });

  it('keeps the cause and a mutable partial', () => {
    const cause = new Error('socket');
    const error = new ConnectionError<{ text: string }>('broke', { cause, partial: { text: 'he' } });
    expect(error.cause).toBe(cause);
    expect(error.partial).toEqual({ text: 'he' });
    error.partial = { text: 'hello' };
    expect(error.partial.text).toBe('hello');
  });

  it('names the phase of a timeout', () => {
    expect(new TimeoutError('first_token', 30).message).toBe('Timed out after 30 ms waiting for the first event');
    expect(new TimeoutError('headers', 5).message).toContain('response headers');
  });
});

describe('ApiError.fromResponse', () => {
  it('picks the subclass by status', () => {
    expect(ApiError.fromResponse(401, '')).toBeInstanceOf(AuthenticationError);
    expect(ApiError.fromResponse(403, '')).toBeInstanceOf(AuthenticationError);
    expect(ApiError.fromResponse(429, '')).toBeInstanceOf(RateLimitError);
    expect(ApiError.fromResponse(500, '')).toBeInstanceOf(ServerError);
    expect(ApiError.fromResponse(529, '')).toBeInstanceOf(ServerError);
    expect(ApiError.fromResponse(422, '')).toBeInstanceOf(BadRequestError);
  });

  it('reads the request id from the usual headers', () => {
    expect(ApiError.fromResponse(500, '', new Headers({ 'request-id': 'r1' })).requestId).toBe('r1');
    expect(ApiError.fromResponse(500, '', new Headers({ 'x-ms-request-id': 'r2' })).requestId).toBe('r2');
  });

  it('reads an Anthropic body: code falls back to the error type', () => {
    const error = ApiError.fromResponse(529, {
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    expect(error).toMatchObject({ status: 529, code: 'overloaded_error', type: 'overloaded_error', message: '529 Overloaded' });
  });
});

describe('ApiError.fromStreamError', () => {
  it('reads an in-stream error frame, flat or nested, and carries the partial', () => {
    const nested = ApiError.fromStreamError({ error: { message: 'quota', code: 'insufficient_quota' } }, { n: 1 });
    expect(nested).toMatchObject({ status: undefined, code: 'insufficient_quota', message: 'quota', partial: { n: 1 } });
    const flat = ApiError.fromStreamError({ code: 'overloaded', message: 'busy' }, null);
    expect(flat).toMatchObject({ code: 'overloaded', message: 'busy' });
  });
});

describe('readProviderError', () => {
  it.each([
    [{ error: { message: 'm', type: 't', code: 'c', param: 'p' } }, { message: 'm', type: 't', code: 'c', param: 'p' }],
    [{ error: { message: 'm', code: 1214 } }, { message: 'm', code: '1214' }],
    [{ error: 'plain' }, { message: 'plain' }],
    [{ message: 'm', code: 'c' }, { message: 'm', code: 'c' }],
    [{ detail: 'not found' }, { message: 'not found' }],
    [{ detail: [{ msg: 'a' }, { msg: 'b' }] }, { message: 'a; b' }],
    [{ msg: 'm' }, { message: 'm' }],
    [{ error_code: 110, error_msg: 'token invalid' }, { message: 'token invalid', code: '110' }],
    ['  text body  ', { message: 'text body' }],
  ])('%j', (body, expected) => {
    expect(readProviderError(body)).toMatchObject(expected);
  });

  it('gives up on bodies with nothing to read', () => {
    expect(readProviderError('')).toBeUndefined();
    expect(readProviderError({ choices: [] })).toBeUndefined();
    expect(readProviderError(null)).toBeUndefined();
    expect(readProviderError([1, 2])).toBeUndefined();
  });

  it('cuts long messages', () => {
    const info = readProviderError({ error: { message: 'x'.repeat(5000) } });
    expect(info?.message).toBe(truncate('x'.repeat(5000)));
    expect(info?.message.length).toBeLessThan(1100);
  });
});

describe('retryAfterMs', () => {
  it('reads retry-after-ms, then Retry-After seconds or HTTP date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }))).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() - 5000).toUTCString() }))).toBe(0);
    expect(retryAfterMs(new Headers())).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': 'later' }))).toBeUndefined();
  });
});
