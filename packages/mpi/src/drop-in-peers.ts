import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ModuleRecord } from '@ssi/core';
import type { DropInPeerData } from './drop-in-peer-hooks';

/** Drop-in package directories whose `@ssi/*` imports this process already redirects. */
const shared = new Set<string>();

/**
 * Makes `@ssi/*` imports of the drop-in modules among `records` (origin "module path") resolve to
 * this process's copies — the `@ssi/mpi` running this code and what it depends on, then the
 * program's own installation — so a drop-in needs no `node_modules` and never brings a second
 * copy of a framework. Call before any of them is imported; registers Node resolve hooks once per
 * new directory (nothing when there are no drop-ins).
 */
export function shareInstallationWithDropIns(
  records: readonly ModuleRecord[],
  program: string | undefined = process.argv[1],
): void {
  const scopes = [
    ...new Set(records.filter((r) => r.origin === 'module path').map((r) => r.location)),
  ]
    .filter((dir) => !shared.has(dir))
    .map((dir) => pathToFileURL(`${dir}/`).href);
  if (scopes.length === 0) return;
  const hooks = new URL('./drop-in-peer-hooks.js', import.meta.url);
  // The hooks are a build output beside this file: running from sources (tests of the layer
  // itself) there is nothing to register, and no drop-in is imported by those tests.
  if (hooks.protocol === 'file:' && !existsSync(hooks)) return;
  const anchors = [import.meta.url];
  if (program) anchors.push(pathToFileURL(resolve(program)).href);
  const data: DropInPeerData = { scopes, anchors };
  register(hooks, { data });
  for (const r of records) if (r.origin === 'module path') shared.add(r.location);
}
