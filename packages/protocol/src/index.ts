export * from './limits.js';
export * from './errors.js';
export * from './json-value.js';
export * from './client.js';
export * from './peer.js';
export * from './codec.js';
