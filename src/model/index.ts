export * from './vocabulary.js';
export * from './config-object.js';
export * from './object-status.js';
export * from './proposal.js';
export * from './errors.js';
export * from './spec-schemas.js';
export * from './subject-username.js';
export * from './random-uuid.js';
