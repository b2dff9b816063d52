import type { ParamRegistry } from '@ssi/core';
import { SsiError } from '@ssi/core';
import { registerLamParams } from '../params';
import { BIND_POLICIES, type BindPolicy } from './bind-plan';

/** `lam_bind_to` checked: the binding policy, or an error naming the value and the choices. */
export function bindPolicy(params: ParamRegistry): BindPolicy {
  registerLamParams(params);
  const value = params.get<string>('lam_bind_to').trim().toLowerCase();
  if (BIND_POLICIES.includes(value as BindPolicy)) return value as BindPolicy;
  throw new SsiError(
    'BAD_PARAM',
    `lam_bind_to (mpirun --bind-to) is "${value}"; expected one of: ${BIND_POLICIES.join(', ')}`,
  );
}

/**
 * `lam_bind_oversubscribed` checked: up to how many ranks a CPU an oversubscribed job is bound in
 * blocks (0: never), or an error naming the value.
 */
export function oversubscribedBinding(params: ParamRegistry): number {
  registerLamParams(params);
  const value = Number(params.get('lam_bind_oversubscribed'));
  if (Number.isInteger(value) && value >= 0) return value;
  throw new SsiError(
    'BAD_PARAM',
    `lam_bind_oversubscribed is "${params.get('lam_bind_oversubscribed')}"; expected a whole number of ranks a CPU >= 0 (0: never bind an oversubscribed job)`,
  );
}
