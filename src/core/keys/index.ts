/** Extended public keys and fast BIP32 public derivation. */
export * from './extended-key.js';
export * from './derive.js';
export * from './path.js';
export { prepareFixedBaseTable } from './fixed-base.js';
