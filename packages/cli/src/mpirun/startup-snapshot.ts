import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SsiContext } from '@ssi/core';

/**
 * A start-up snapshot for the ranks (issue 21; `mpi_base_startup_snapshot`): Node 20's user-land
 * V8 snapshot (`--build-snapshot`) in which the start-up bundles of `@ssi/mpi`, what it needs and
 * the installed rpi and coll modules are loaded and have run, so that a rank started with
 * `--snapshot-blob` does not read, compile or run them (`@ssi/core/startup-snapshot`). Built by
 * the first mpirun that needs it (~0.4 s, once), kept beside the bundles' code caches and named
 * after what it holds (Node's binary and version, NODE_OPTIONS, each bundle's path, size and
 * mtime), so a rebuild or another Node makes a new one. Only for mpirun's private universe (its
 * ranks have mpirun's environment, so the V8 flags the snapshot was built with) and for ranks on
 * mpirun's own node. Third-party modules without a bundle load as before.
 */
const BUNDLE = 'ssi-bundle.cjs';
const DOOR = 'ssi-load.cjs';
const SSI_REQUIRE = /\brequire\("(@ssi\/[^"/]+)"\)/g;
const require = createRequire(import.meta.url);

interface BundledPackage {
  name: string;
  dist: string;
}

/** The Node options that start a rank from the snapshot, or [] (with a warning if it failed). */
export function startupSnapshotArgs(ctx: SsiContext, warn: (line: string) => void): string[] {
  if (!ctx.params.get<boolean>('mpi_base_startup_snapshot')) return [];
  try {
    const blob = startupSnapshot(ctx);
    return blob ? ['--snapshot-blob', blob] : [];
  } catch (err) {
    warn(`warning: the ranks start without a start-up snapshot: ${(err as Error).message}`);
    return [];
  }
}

/** The snapshot's file, built now if missing; undefined where no cache may be kept. */
function startupSnapshot(ctx: SsiContext): string | undefined {
  const mpiDir = dirname(require.resolve('@ssi/mpi/package.json'));
  const roots = [mpiDir, ...moduleDirs(ctx)];
  const packages = bundledPackages(roots);
  const loader = require('@ssi/core/bundle-loader') as {
    codeCacheDir(bundle: string): string | undefined;
  };
  const core = packages.find((p) => p.name === '@ssi/core');
  const dir = core && loader.codeCacheDir(join(core.dist, BUNDLE));
  if (!dir) return undefined;
  const builder = require.resolve('@ssi/core/startup-snapshot');
  const loaderFile = join(dirname(builder), 'bundle-loader.cjs');
  // Node refuses a snapshot of other V8 flags (exit 14): NODE_OPTIONS is part of its name.
  const identity = [
    process.version,
    process.arch,
    fileIdentity(process.execPath),
    `NODE_OPTIONS=${process.env.NODE_OPTIONS ?? ''}`,
    fileIdentity(builder),
    fileIdentity(loaderFile),
  ];
  for (const p of packages) identity.push(p.name, fileIdentity(join(p.dist, BUNDLE)));
  const name = createHash('sha256').update(identity.join('|')).digest('hex').slice(0, 16);
  const blob = join(dir, `startup-${name}.blob`);
  if (existsSync(blob)) return blob;
  build(blob, builder, packages);
  removeStaleSnapshots(dir, blob);
  return blob;
}

/**
 * Snapshots of earlier builds go once they are an hour old (not at once: a job that named one
 * just before the rebuild may still be starting ranks with it, and every NODE_OPTIONS has its own).
 */
function removeStaleSnapshots(dir: string, keep: string): void {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (!name.startsWith('startup-') || !name.endsWith('.blob') || file === keep) continue;
    try {
      if (statSync(file).mtimeMs < hourAgo) rmSync(file, { force: true });
    } catch {
      // gone already (another mpirun cleaned up)
    }
  }
}

function build(blob: string, builder: string, packages: BundledPackage[]): void {
  const temp = `${blob}.${process.pid}.tmp`;
  const r = spawnSync(process.execPath, ['--snapshot-blob', temp, '--build-snapshot', builder], {
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: '',
      SSI_SNAPSHOT_PACKAGES: JSON.stringify(packages),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 60_000,
  });
  if (r.status !== 0 || !existsSync(temp)) {
    rmSync(temp, { force: true });
    const why = r.error?.message ?? lastError(r.stderr?.toString() ?? '');
    throw new Error(`building it failed (${why || `exit ${r.status ?? r.signal}`})`);
  }
  chmodSync(temp, 0o600); // code this user's ranks run, as the code caches
  renameSync(temp, blob);
}

/** The last line of Node's output that is not one of its snapshot builder's warnings. */
function lastError(stderr: string): string {
  const lines = stderr
    .split('\n')
    .filter((l) => l.trim() && !/Warning|It may|To request|--trace-warnings/.test(l));
  return lines.at(-1)?.trim() ?? '';
}

/** Package directories of the installed rpi and coll modules (what every rank opens). */
function moduleDirs(ctx: SsiContext): string[] {
  return ctx.discovery.modules
    .filter((m) => (m.type === 'rpi' || m.type === 'coll') && m.origin === 'node_modules')
    .map((m) => m.location);
}

/**
 * The packages with a start-up bundle among `roots` and the `@ssi/*` packages their bundles
 * require, each after the packages it requires (the order the snapshot loads them in).
 */
function bundledPackages(roots: readonly string[]): BundledPackage[] {
  const out: BundledPackage[] = [];
  const seen = new Set<string>();
  const visit = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const dist = join(dir, 'dist');
    if (!existsSync(join(dist, BUNDLE)) || !existsSync(join(dist, DOOR))) return;
    const fromHere = createRequire(join(dir, 'package.json'));
    for (const [, name] of readFileSync(join(dist, BUNDLE), 'utf8').matchAll(SSI_REQUIRE)) {
      visit(dirname(fromHere.resolve(`${name}/package.json`)));
    }
    const name = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string })
      .name;
    out.push({ name, dist });
  };
  for (const dir of roots) visit(dir);
  return out;
}

function fileIdentity(file: string): string {
  const st = statSync(file);
  return `${file}:${st.size}:${st.mtimeMs}`;
}
