/** The two tools of the `npm start` agent (examples/agent.ts), shared with examples/telemetry.ts. */
import { defineTool } from 'ai4ts';
import * as z from 'zod';

// Demo readings: the point is the loop, not the weather service.
const CELSIUS: Record<string, number> = { paris: 18, zürich: 21, zurich: 21 };

export const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather of a city',
  parameters: z.object({ city: z.string().describe('City name') }),
  execute: async ({ city }) => ({ city, temperature: CELSIUS[city.toLowerCase()] ?? 15, unit: 'celsius' }),
});

export const convertTemperature = defineTool({
  name: 'convert_temperature',
  description: 'Converts a temperature between celsius and fahrenheit',
  parameters: z.object({
    value: z.number(),
    from: z.enum(['celsius', 'fahrenheit']),
    to: z.enum(['celsius', 'fahrenheit']),
  }),
  execute: async ({ value, from, to }, { progress }) => {
    progress({ progress: 1, total: 1, message: `${from} -> ${to}` }); // a tool.progress event (or MCP progress)
    if (from === to) return value;
    const converted = from === 'celsius' ? (value * 9) / 5 + 32 : ((value - 32) * 5) / 9;
    return Math.round(converted * 10) / 10;
  },
});
