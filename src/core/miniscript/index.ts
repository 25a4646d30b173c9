/** Miniscript (wsh and tapscript): parse, print, type, check sanity, analyse spending paths, satisfy, compile policies. */
export { MiniscriptError } from './errors.js';
export type { MiniscriptNode, ScriptContext, Fragment } from './node.js';
export { keysInOrder } from './node.js';
export { parseMiniscript, printMiniscript } from './parse.js';
export { buildScript, type KeyBytes } from './script.js';
export { typeString } from './types.js';
export { assertSane, miniscriptFacts, sanityProblem, validityProblem, WSH_LIMITS, type MiniscriptFacts } from './analyse.js';
export { spendingPaths, MAX_PATHS, type MiniscriptPath, type PathSizes } from './paths.js';
export { satisfy, sequenceMeets, lockTimeMeets, type SatisfierInputs } from './satisfy.js';
export { compilePolicy, tapTreeText, NUMS_H, type CompiledPolicy, type PolicyPath, type SimplePolicy } from './compile.js';
export { parseMiniscriptDescriptor, deriveMiniscriptOutput, deriveMiniscriptRange, type MiniscriptDescriptor, type MiniscriptLeaf, type MiniscriptOutput } from './descriptor.js';
export { taprootOutput, taprootOutputs, leafHash, type TapTree, type TaprootInput, type TaprootOutput } from './taproot.js';
export { miniscriptSpendPlan, miniscriptOutputPlan, isUnspendableKey, SIGNATURE_BYTES } from './plan.js';
