/** Output descriptors (BIP380-389 subset the service supports): parse, print, derive, policies. */
export * from './errors.js';
export { addChecksum, descriptorChecksum, stripChecksum } from './checksum.js';
export type { DerivationStep, KeyExpression, KeyOrigin } from './key-expression.js';
export * from './descriptor.js';
export * from './derive.js';
export * from './policy.js';
export { singleSignaturePathWarning } from './key-purpose.js';
