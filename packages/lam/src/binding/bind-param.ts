import type { ParamRegistry } from '@ssi/core';
import { SsiError } from '@ssi/core';
import { registerLamParams } from '../params';
import {
  BIND_POLICIES,
  type BindPolicy,
  OVERSUBSCRIBED_BINDINGS,
  type OversubscribedBinding,
} from './bind-plan';

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

/** `lam_bind_oversubscribed` checked: how a job that oversubscribes a node is bound. */
export function oversubscribedBinding(params: ParamRegistry): OversubscribedBinding {
  registerLamParams(params);
  const value = params.get<string>('lam_bind_oversubscribed').trim().toLowerCase();
  if (OVERSUBSCRIBED_BINDINGS.includes(value as OversubscribedBinding)) {
    return value as OversubscribedBinding;
  }
  throw new SsiError(
    'BAD_PARAM',
    `lam_bind_oversubscribed is "${value}"; expected one of: ${OVERSUBSCRIBED_BINDINGS.join(', ')}`,
  );
}
