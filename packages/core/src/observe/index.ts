export { type ResponseInfo, type ResultInfo, resultInfo } from './call.js';
export { addCost, type Cost, costOf, DEFAULT_PRICES, type ModelPrice, type Prices, priceOf } from './cost.js';
export type { Logger, LogLevel, LogOptions } from './logger.js';
export type { EventTransform, ModelContext, ModelMiddleware } from './middleware.js';
export type { TelemetryOptions } from './telemetry.js';
