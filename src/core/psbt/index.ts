/** PSBTs: parse (v0, v2), write (v0, v2), build, combine, check signatures, finalize, extract, decode, record. */
export * from './types.js';
export { parsePsbt, parsePsbtInSteps, serializePsbt, serializePsbtV2, psbtToBase64, psbtTxid } from './codec.js';
export { buildPsbt, taprootOutputKey, type BuildInput, type BuildOutput, type BuildPsbtRequest, type KeyDerivation, type TaprootKeyInfo } from './build.js';
export { combinePsbts, sameTransaction } from './combine.js';
export { mergeCosignerPsbt, startCosignerMerge, type CosignerMerge } from './merge.js';
export { finalSignerKeys } from './final-signers.js';
export { finalizePsbt, extractTransaction, extractVerifiedTransaction, pushData, type FinalizeOptions, type FinalizeResult } from './finalize.js';
export {
  checkPartialSignatures,
  checkInputSignatures,
  assertPartialSignaturesValid,
  signatureCount,
  minimumSignatureCount,
  type PartialSignatureCheck,
} from './signatures.js';
export { decodePsbt, decodePsbtInSteps, psbtFee, spentOutput, spentOutputs, formatPath, type DecodedPsbt, type DecodedPsbtInput, type DecodedPsbtOutput } from './decode.js';
