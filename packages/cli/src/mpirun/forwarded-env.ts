import { delimiter, resolve } from 'node:path';
import { ORIGINS_ENV, type ParamRegistry } from '@ssi/core';

/**
 * What every rank gets besides the `LAM_MPI_SSI_*` values (`toEnvironment()`): where each value
 * came from here, so that a rank blames a bad one on `--ssi` or on the parameter file's line and
 * not on "the environment"; and the drop-in module directories of `SSI_MODULE_PATH` (made
 * absolute), so that a drop-in works in a booted universe as in the private one without `-x`.
 */
export function forwardedEnv(
  params: ParamRegistry,
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): Record<string, string> {
  const origins = [...params.explicitSettings().keys()].map((name) => {
    const { source, origin } = params.rawSetting(name)!;
    return [name, { source, origin }];
  });
  const out: Record<string, string> = {
    [ORIGINS_ENV]: JSON.stringify(Object.fromEntries(origins)),
  };
  const modulePath = env.SSI_MODULE_PATH;
  if (modulePath) {
    out.SSI_MODULE_PATH = modulePath
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => resolve(cwd, dir))
      .join(delimiter);
  }
  return out;
}
