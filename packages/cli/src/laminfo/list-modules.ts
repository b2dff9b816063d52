import type { ModuleRecord, SsiContext } from '@ssi/core';
import { FRAMEWORKS, formatRequirement, formatVersion, SSI_API_VERSION } from '@ssi/core';
import { bindingSummary } from './binding-line';

export interface ModuleInfo {
  type: string;
  name: string;
  ssiApi: string;
  typeApi: string;
  version: string;
  origin: string;
  location: string;
  packageName?: string;
  usable: boolean;
  incompatible?: string;
  /** What the module needs (its manifest's `requires`), e.g. "rpi module tcp 1.x (≥ 1.0)". */
  requires: string[];
}

export function moduleInfo(r: ModuleRecord): ModuleInfo {
  return {
    type: r.type,
    name: r.name,
    ssiApi: formatVersion(r.ssiApi),
    typeApi: formatVersion(r.typeApi),
    version: formatVersion(r.version),
    origin: r.origin,
    location: r.location,
    packageName: r.packageName,
    usable: !r.incompatible,
    incompatible: r.incompatible,
    requires: r.requires.map(formatRequirement),
  };
}

const LABEL_WIDTH = 20;
export const label = (text: string) => text.padStart(LABEL_WIDTH);

/** One line per module in the style of Fig. 3.2, versions short or `full`. */
export function moduleLine(m: ModuleInfo, full: boolean): string {
  const v = (s: string) => (full ? s : s.split('.').slice(0, 2).join('.'));
  const versions = `SSI v${v(m.ssiApi)}, API v${v(m.typeApi)}, Module v${v(m.version)}`;
  const where = m.origin === 'static' ? 'static' : `${m.origin}: ${m.location}`;
  const indent = `\n${' '.repeat(LABEL_WIDTH + 2)}`;
  const status = m.usable ? '' : `${indent}UNUSABLE: ${m.incompatible}`;
  const needs = m.requires.length ? `${indent}requires ${m.requires.join(', ')}` : '';
  return `${label(`SSI ${m.type}`)}: ${m.name} (${versions}) [${where}]${needs}${status}`;
}

export function overview(ctx: SsiContext, cliVersion: string): string[] {
  const file = ctx.params.paramFileInfo();
  const lines = [
    `${label('SSI for Node')}: @ssi/cli ${cliVersion}, SSI API v${SSI_API_VERSION}`,
    ...Object.entries(FRAMEWORKS).map(
      ([type, f]) => `${label(`${type} framework`)}: API v${f.api} (selector --ssi ${f.selector})`,
    ),
    `${label('Parameter file')}: ${file.path}${file.found ? '' : ' (not present)'}`,
    `${label('Rank binding')}: ${bindingSummary(ctx)}`,
  ];
  const modules = ctx.discovery.modules.map(moduleInfo);
  if (modules.length === 0) lines.push(`${label('Modules')}: none found`);
  for (const m of modules) lines.push(moduleLine(m, true));
  return lines;
}
