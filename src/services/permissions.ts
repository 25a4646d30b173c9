/**
 * What a token may do (docs/adr/0007). A token without a permission list has all of its user's rights;
 * one with a list may do only what the list names, and never more than its user.
 */
import { ServiceError } from './errors.js';
import type { Principal } from './principal.js';

export const PERMISSIONS = [
  'wallets:read',
  'wallets:manage',
  'psbt:create',
  'psbt:sign',
  'psbt:broadcast',
  'service:read',
  'webhooks:manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const isPermission = (value: unknown): value is Permission => typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);

export function permissionMissing(permission: Permission): ServiceError {
  return new ServiceError('forbidden', 'permission_missing', `This token lacks the permission ${permission}`, { permission });
}

/** Whether the caller may do what `permission` allows (a token without a list may do all its user may). */
export const hasPermission = (principal: Principal, permission: Permission): boolean => !principal.permissions || principal.permissions.includes(permission);

/** 403 `permission_missing` when the caller's token does not carry `permission`. */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal, permission)) throw permissionMissing(permission);
}

/** Whether the caller's token may reach this wallet (a wallet outside its list answers as not found). */
export function walletInScope(principal: Principal, walletId: string): boolean {
  return principal.walletIds === undefined || principal.walletIds.includes(walletId);
}
