/**
 * `@ai4ts/bridge/redis`: the gateway's stream store in Redis Streams, for several instances behind a load balancer.
 * A separate entry, so that the main one stays free of ioredis (and of Node) for fetch-style runtimes.
 */
export { RedisStreamStore, type RedisStreamStoreOptions } from './gateway/redis-store.js';
