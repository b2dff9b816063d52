import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { FRAMEWORKS, isFrameworkType, parseVersion, SsiError } from '@ssi/core';
import type { PluginSpec } from './plugin-files';
import { extraFiles, moduleSource, packageJson, readme } from './plugin-files';

export interface CreateOptions {
  dir: string;
  type: string;
  name: string;
  packageName?: string;
  typeApi?: string;
  description?: string;
}

/** Writes a ready-to-pack module package into `dir` (which must be empty or absent). */
export function createPlugin(options: CreateOptions): { dir: string; spec: PluginSpec } {
  const spec = checkOptions(options);
  const dir = resolve(options.dir);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new SsiError('BAD_ARGS', `${dir} is not empty; choose a new directory`);
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), packageJson(spec));
  writeFileSync(join(dir, 'index.js'), moduleSource(spec));
  writeFileSync(join(dir, 'README.md'), readme(spec));
  for (const [file, text] of Object.entries(extraFiles(spec))) writeFileSync(join(dir, file), text);
  return { dir, spec };
}

function checkOptions(o: CreateOptions): PluginSpec {
  if (!isFrameworkType(o.type)) {
    throw new SsiError(
      'BAD_ARGS',
      `unknown module type "${o.type}"; expected one of ${Object.keys(FRAMEWORKS).join(', ')}`,
    );
  }
  if (!/^[a-z][a-z0-9_]*$/.test(o.name)) {
    throw new SsiError(
      'BAD_ARGS',
      `module name "${o.name}" must be lower case letters, digits and "_" (it becomes part of parameter names)`,
    );
  }
  const typeApi = o.typeApi ?? FRAMEWORKS[o.type].api;
  parseVersion(typeApi, '--type-api');
  return {
    type: o.type,
    name: o.name,
    typeApi,
    packageName: o.packageName ?? `ssi-${o.type}-${o.name.replaceAll('_', '-')}`,
    description:
      o.description ?? `The ${o.name} ${o.type} module for SSI for Node (${basename(o.dir)}).`,
  };
}
