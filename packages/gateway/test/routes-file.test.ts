/** The routing file, JSON or YAML: the same routes, the same validation, errors that say where. */
import { describe, expect, it } from 'vitest';
import { readRoutes, routesFormatOf } from '../src/upstreams/routes-file.js';

const JSON_FILE = `{
  "routes": [
    { "model": "claude-*", "provider": "anthropic" },
    { "model": "fast", "upstream": "https://api.groq.com/openai/v1", "protocol": "chat", "keyEnv": "GROQ_API_KEY",
      "upstreamModel": "llama-3.3-70b-versatile" },
    { "model": "*", "upstream": "http://127.0.0.1:9000/chat", "dialect": "typed" }
  ]
}`;

const YAML_FILE = `# The same routes, in YAML.
routes:
  - model: claude-*
    provider: anthropic
  - model: fast
    upstream: https://api.groq.com/openai/v1
    protocol: chat
    keyEnv: GROQ_API_KEY
    upstreamModel: llama-3.3-70b-versatile
  - { model: "*", upstream: "http://127.0.0.1:9000/chat", dialect: typed }
`;

const ENV = { GROQ_API_KEY: 'gsk-secret-value' };

describe('the routing file', () => {
  it('is chosen by extension', () => {
    expect(['routes.yaml', 'ROUTES.YML', 'a/b.yml', 'routes.json', 'routes'].map(routesFormatOf)).toEqual([
      'yaml',
      'yaml',
      'yaml',
      'json',
      'json',
    ]);
  });

  it('reads the same routes from JSON and from YAML, keys from the environment', () => {
    const routes = readRoutes(YAML_FILE, ENV, 'yaml');
    expect(routes).toEqual(readRoutes(JSON_FILE, ENV, 'json'));
    expect(routes).toEqual([
      { model: 'claude-*', provider: 'anthropic', upstreamToken: undefined, upstreamModel: undefined },
      {
        model: 'fast',
        upstream: 'https://api.groq.com/openai/v1',
        protocol: 'chat',
        upstreamToken: 'gsk-secret-value',
        upstreamModel: 'llama-3.3-70b-versatile',
      },
      { model: '*', upstream: 'http://127.0.0.1:9000/chat', dialect: 'typed', upstreamToken: undefined },
    ]);
  });

  it('reads onUnsupported on provider routes, and names a bad value', () => {
    const file = '{"routes": [{ "model": "fast", "upstream": "https://api.groq.com/openai/v1", "protocol": "chat", "onUnsupported": "refuse" }]}';
    expect(readRoutes(file, ENV)).toEqual([
      { model: 'fast', upstream: 'https://api.groq.com/openai/v1', protocol: 'chat', upstreamToken: undefined, upstreamModel: undefined, onUnsupported: 'refuse' },
    ]);
    expect(() => readRoutes(file.replace('"refuse"', '"ignore"'), ENV)).toThrow(/routes\.0\.onUnsupported .*Invalid option/);
  });

  it('names the bad field and its line, in either format', () => {
    const badJson = JSON_FILE.replace('"protocol": "chat"', '"protocol": "grpc"');
    expect(() => readRoutes(badJson, ENV, 'json')).toThrow(
      /^the routing file: routes\.1\.protocol \(line 4, column 82\): Invalid option: expected one of "chat"\|"responses"\|"messages"\|"gemini"$/,
    );
    const badYaml = YAML_FILE.replace('protocol: chat', 'protocol: grpc');
    expect(() => readRoutes(badYaml, ENV, 'yaml')).toThrow(/^the routing file: routes\.1\.protocol \(line 7, column 15\): Invalid option/);
    expect(() => readRoutes('routes: []\n', ENV, 'yaml')).toThrow(/^the routing file: routes \(line 1, column 9\): Too small/);
    expect(() => readRoutes('routes:\n  - model: x\n    provider: anthropic\n    extra: 1\n', ENV, 'yaml')).toThrow(
      'the routing file: routes.0 (line 2, column 5): Unrecognized key: "extra"',
    );
    expect(() => readRoutes('routes:\n  - model: x\n    provider: nope\n', ENV, 'yaml')).toThrow(
      'the routing file: routes.0.provider (line 3, column 15): an unknown provider preset',
    );
  });

  it('says where a syntax error is', () => {
    expect(() => readRoutes('{\n  "routes": [,]\n}', ENV, 'json')).toThrow(/^the routing file is not JSON \(line 2, column 14\): /);
    expect(() => readRoutes('routes:\n  - model: x\n    upstream: [oops\n', ENV, 'yaml')).toThrow(
      /^the routing file is not YAML \(line \d+, column \d+\): \S/,
    );
    expect(() => readRoutes('routes: [\n', ENV, 'yaml')).toThrow(/^the routing file is not YAML \(line/);
  });

  it('never shows a key, and says when a named variable is missing', () => {
    expect(() => readRoutes(YAML_FILE, {}, 'yaml')).toThrow('the routing file: GROQ_API_KEY is not set');
    const error = (() => {
      try {
        readRoutes(YAML_FILE.replace('protocol: chat', 'protocol: grpc'), ENV, 'yaml');
      } catch (failure) {
        return String(failure);
      }
      return '';
    })();
    expect(error).toContain('routes.1.protocol');
    expect(error).not.toContain('gsk-secret-value');
  });
});
