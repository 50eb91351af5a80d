export type { OneTimeUses } from './one-time-uses.js';
export { MemoryOneTimeUses } from './memory-one-time-uses.js';
export { RedisOneTimeUses, type RedisOneTimeUsesOptions } from './redis-one-time-uses.js';
