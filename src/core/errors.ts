/**
 * Typed errors of the pure Bitcoin code. `code` is a stable snake_case name that the API layer
 * maps to a status; `message` is safe to show to a user (it never holds secrets).
 */
export class CoreError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An address that does not parse, or that belongs to another network. */
export class AddressError extends CoreError {}

/** A key (xpub, pubkey) that does not parse or belongs to another network. */
export class KeyError extends CoreError {}
