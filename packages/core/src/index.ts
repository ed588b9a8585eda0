export * from './errors.js';
export * from './events.js';
export * from './tools/index.js';
export * from './transport/index.js';
