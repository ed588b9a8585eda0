/** The two tools of the scripted model's agent script (`agentScript` of @ai4ts/testing), and the answer it ends on. */
import { defineTool } from 'ai4ts';
import * as z from 'zod';

export const AGENT_TOOLS = [
  defineTool({
    name: 'get_weather',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, temperature: city === 'Paris' ? 18 : 21, unit: 'celsius' }),
  }),
  defineTool({
    name: 'convert_temperature',
    parameters: z.object({ value: z.number(), from: z.string(), to: z.string() }),
    execute: ({ value }) => Math.round(((value * 9) / 5 + 32) * 10) / 10,
  }),
];

export const AGENT_ANSWER = 'Right now it is Paris: 18 °C, Zürich: 21 °C. The warmer city is Zürich at 21 °C, which is 69.8 °F.';
