export * from './scopes.js';
export * from './api-keys.js';
export * from './key-rate-limiter.js';
