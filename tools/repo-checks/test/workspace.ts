import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repo = resolve(import.meta.dirname, '../../..');

export interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  bin?: unknown;
  main?: string;
  types?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  ssi?: { modules?: { type: string; name: string; entry: string }[] };
  [field: string]: unknown;
}

export interface WorkspacePackage {
  dir: string;
  json: PackageJson;
}

/** Every package of the workspace (packages/*, plugins/*, tools/*, examples). */
export function workspacePackages(root = repo): WorkspacePackage[] {
  const dirs = ['packages', 'plugins', 'tools'].flatMap((group) => {
    try {
      return readdirSync(join(root, group)).map((d) => join(root, group, d));
    } catch {
      return [];
    }
  });
  return [...dirs, join(root, 'examples')].flatMap((dir) => {
    try {
      return [{ dir, json: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }];
    } catch {
      return [];
    }
  });
}

export function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 240_000,
    env: { ...process.env, ...env },
  });
  if (r.error)
    throw new Error(`${cmd} ${args.join(' ')} could not run in ${cwd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.status} in ${cwd}:\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r.stdout;
}
