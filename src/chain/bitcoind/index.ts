/** Bitcoin Core JSON-RPC chain source. */
export { BitcoindChainSource, type BitcoindChainSourceOptions } from './bitcoind-chain-source.js';
export { RpcClient, type RpcClientOptions, type CallOptions, type BatchOutcome } from './rpc-client.js';
