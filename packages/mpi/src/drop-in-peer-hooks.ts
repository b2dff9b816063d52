/**
 * Module resolve hooks (Node's `module.register`) that give drop-in modules their peer packages.
 * A drop-in directory (`SSI_MODULE_PATH`) has no `node_modules` of its own, so Node cannot find
 * `@ssi/mpi` from there; and if it could (a copy beside it), the module would get a second copy of
 * the MPI layer, with its own state. Like `peerDependencies`, every `@ssi/*` import made by code in
 * a drop-in directory resolves as the loading installation resolves it: from the anchors, in order
 * (the `@ssi/mpi` that registered the hooks, then the program), else as Node would.
 *
 * Runs on Node's loader thread: no imports of the MPI layer here, only the data it was given.
 */

export interface DropInPeerData {
  /** `file:` URLs of the drop-in package directories, each ending in "/". */
  scopes: string[];
  /** `file:` URLs resolution starts from, first success winning. */
  anchors: string[];
}

interface ResolveContext {
  parentURL?: string;
  conditions?: string[];
  importAttributes?: Record<string, string>;
}
type NextResolve = (specifier: string, context?: ResolveContext) => Promise<unknown>;

let data: DropInPeerData = { scopes: [], anchors: [] };

export async function initialize(given: DropInPeerData): Promise<void> {
  data = given;
}

export async function resolve(
  specifier: string,
  context: ResolveContext,
  nextResolve: NextResolve,
): Promise<unknown> {
  const parent = context.parentURL;
  if (specifier.startsWith('@ssi/') && parent && data.scopes.some((s) => parent.startsWith(s))) {
    for (const anchor of data.anchors) {
      try {
        return await nextResolve(specifier, { ...context, parentURL: anchor });
      } catch {
        // Not installed beside this anchor: try the next one, then Node's own resolution,
        // whose error names the drop-in that imported it.
      }
    }
  }
  return nextResolve(specifier, context);
}
