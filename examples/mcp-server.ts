/**
 * A small MCP server over stdio, made of `defineTool` tools with `serveMcp`: what an MCP host (Claude Desktop, an
 * IDE, `examples/mcp-agent.ts`) starts as a command. No CLI of ours is needed; a host's configuration names this file:
 *
 *   { "mcpServers": { "ai4ts-example": { "command": "npx", "args": ["tsx", "/path/to/ai4ts/examples/mcp-server.ts"] } } }
 *
 * stdout carries the protocol, so this file never prints to it.
 */
import { defineTool } from '@ai4ts/core';
import { serveMcp } from '@ai4ts/mcp';
import * as z from 'zod';

// Demo readings: the point is the protocol, not the weather service.
const CELSIUS: Record<string, number> = { paris: 18, zürich: 21, zurich: 21 };

const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather of a city',
  parameters: z.object({ city: z.string().describe('City name') }),
  execute: ({ city }) => ({ city, temperature: CELSIUS[city.toLowerCase()] ?? 15, unit: 'celsius' }),
});

const convertTemperature = defineTool({
  name: 'convert_temperature',
  description: 'Converts a temperature between celsius and fahrenheit',
  parameters: z.object({
    value: z.number(),
    from: z.enum(['celsius', 'fahrenheit']),
    to: z.enum(['celsius', 'fahrenheit']),
  }),
  execute: ({ value, from, to }, { progress }) => {
    progress({ progress: 1, total: 1, message: `${from} -> ${to}` });
    if (from === to) return value;
    const converted = from === 'celsius' ? (value * 9) / 5 + 32 : ((value - 32) * 5) / 9;
    return Math.round(converted * 10) / 10;
  },
});

await serveMcp([getWeather, convertTemperature], { name: 'ai4ts-example', version: '0.1.0' }).connectStdio();
