/**
 * `@ai4ts/gateway/redis`: the gateway's stream store in Redis Streams, for several instances behind a load balancer.
 * A separate entry, so that the main one stays free of ioredis (an optional peer dependency) for fetch-style runtimes.
 */
export { RedisStreamStore, type RedisStreamStoreOptions } from './state/redis.js';
export { RedisKeyCounters, RedisKeyStore, type RedisKeysOptions } from './keys/redis.js';
