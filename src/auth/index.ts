export * from './scopes.js';
export * from './api-keys.js';
export * from './key-rate-limiter.js';
export * from './token-review-authenticator.js';
export * from './kube-token-reviewer.js';
