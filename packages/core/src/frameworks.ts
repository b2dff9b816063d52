import type { Version } from './version';
import { parseVersion } from './version';

/** The version of the SSI meta-framework API that this core implements. */
export const SSI_API_VERSION = '1.0.0';

/**
 * The component frameworks and the type-API version each implements (Ch. 3.1.3). A framework
 * package (`@ssi/lam`, `@ssi/mpi`) defines the interface; core keeps the versions so that
 * `laminfo` can judge every module without loading any framework code.
 *
 * `selector` is the parameter that picks modules of the type: `--ssi rpi tcp`. The two halves
 * of a checkpoint/restart component share one selector: `--ssi cr self`.
 */
export const FRAMEWORKS = {
  boot: { api: '1.1.0', selector: 'boot', layer: 'lam', scope: 'universe' },
  crlam: { api: '1.0.0', selector: 'cr', layer: 'lam', scope: 'mpirun' },
  rpi: { api: '2.0.0', selector: 'rpi', layer: 'mpi', scope: 'process' },
  coll: { api: '1.2.0', selector: 'coll', layer: 'mpi', scope: 'communicator' },
  crmpi: { api: '1.0.0', selector: 'cr', layer: 'mpi', scope: 'job' },
} as const;

export type FrameworkType = keyof typeof FRAMEWORKS;

export function isFrameworkType(type: string): type is FrameworkType {
  return Object.hasOwn(FRAMEWORKS, type);
}

export function frameworkApi(type: FrameworkType): Version {
  return parseVersion(FRAMEWORKS[type].api);
}

/** Every selector parameter name (`boot`, `cr`, `rpi`, `coll`): not module parameters. */
export const SELECTOR_PARAMS: readonly string[] = [
  ...new Set(Object.values(FRAMEWORKS).map((f) => f.selector)),
];
