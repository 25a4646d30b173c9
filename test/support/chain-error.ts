/** Awaits a chain-source call that must fail, and returns its typed ChainError. */
import { expect } from 'vitest';
import { ChainError } from '../../src/chain/types.js';

export async function chainFailure(promise: Promise<unknown>): Promise<ChainError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ChainError);
    return error as ChainError;
  }
  throw new Error('expected a ChainError');
}
