import { FRAMEWORKS, type FrameworkType } from '@ssi/core';
import { collHelpers, collMembers } from './coll-template';
import {
  RPI_TEMPLATE_FILES,
  rpiImports,
  rpiMembers,
  rpiParams,
  rpiReadme,
  rpiTemplateFile,
} from './rpi-template';

export interface PluginSpec {
  type: FrameworkType;
  name: string;
  packageName: string;
  /** Framework API the module is written against; the installed framework's by default. */
  typeApi: string;
  description: string;
}

/** The framework package a module of each type plugs into (its peerDependency, later). */
const WHERE_THE_INTERFACE_LIVES: Record<FrameworkType, string> = {
  boot: '@ssi/lam (the boot framework, DESIGN.md §4 "boot")',
  crlam: '@ssi/lam (the crlam half of a cr component)',
  rpi: '@ssi/mpi (the rpi framework, DESIGN.md §4 "rpi")',
  coll: '@ssi/mpi (the coll framework, DESIGN.md §4 "coll")',
  crmpi: '@ssi/mpi (the crmpi half of a cr component)',
};

export function packageJson(spec: PluginSpec): string {
  const pkg = {
    name: spec.packageName,
    version: '0.1.0',
    description: spec.description,
    type: 'module',
    exports: { '.': './index.js', './package.json': './package.json' },
    files: ['index.js', ...(spec.type === 'rpi' ? RPI_TEMPLATE_FILES : []), 'README.md'],
    keywords: ['ssi-module', `ssi-${spec.type}`],
    engines: { node: '>=20' },
    peerDependencies: {
      '@ssi/core': '^1.0.0',
      // An rpi module uses @ssi/mpi's request, matching and error types.
      ...(spec.type === 'rpi' ? { '@ssi/mpi': '^1.0.0' } : {}),
    },
    ssi: {
      ssiApi: '1.0.0',
      modules: [
        {
          type: spec.type,
          name: spec.name,
          typeApi: spec.typeApi,
          entry: './index.js',
        },
      ],
    },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

export function moduleSource(spec: PluginSpec): string {
  return `// @ts-check
/**
 * The ${spec.type} module "${spec.name}". SSI finds it by the "ssi" field of package.json without
 * running this file; the code runs only when a framework opens the module.
 * The ${spec.type} interface is defined by ${WHERE_THE_INTERFACE_LIVES[spec.type]}.
 */
${spec.type === 'coll' ? collHelpers() : ''}${spec.type === 'rpi' ? rpiImports() : ''}
/** @type {import('@ssi/core').SsiModule & Record<string, unknown>} */
const module = {
  ssiApi: '1.0.0',
  type: '${spec.type}',
  typeApi: '${spec.typeApi}',
  name: '${spec.name}',
  version: '0.1.0',

  // Parameters are named ${spec.type}_${spec.name}_<param>: set them with
  // --ssi ${spec.type}_${spec.name}_<param> value, LAM_MPI_SSI_${spec.type}_${spec.name}_<param>, or a parameter file.
  ${spec.type === 'rpi' ? rpiParams(spec) : exampleParams(spec)}

${openMember(spec)}
${spec.type === 'coll' ? collMembers(spec) : ''}${spec.type === 'rpi' ? rpiMembers(spec) : ''}
  /** Runs once, last. Free what open allocated. */
  close() {},
};

export default module;
`;
}

function openMember(spec: PluginSpec): string {
  const what =
    '  /** Runs once per process. Return false or a reason string when this module cannot run here. */';
  if (spec.type === 'rpi') return `${what}\n  open() {\n    return true;\n  },`;
  return `${what}
  open(ctx) {
    ctx.verbose(10, \`opened with example=\${ctx.param('example')}\`);
    return true;
  },`;
}

/** The parameters of every template but rpi's: a priority and an example to replace. */
function exampleParams(spec: PluginSpec): string {
  return `params: {
    priority: { type: 'int', default: 10, help: 'Selection priority of ${spec.name} (0-100)' },
    example: { type: 'string', default: 'hello', help: 'An example parameter; replace it with your own' },
  },`;
}

/** The template's other files, by name (the rpi template's protocol files). */
export function extraFiles(spec: PluginSpec): Record<string, string> {
  if (spec.type !== 'rpi') return {};
  return Object.fromEntries(RPI_TEMPLATE_FILES.map((f) => [f, rpiTemplateFile(f)]));
}

export function readme(spec: PluginSpec): string {
  const selector = FRAMEWORKS[spec.type].selector;
  return `# ${spec.packageName}

${spec.description}

An SSI for Node ${spec.type} module named \`${spec.name}\` (${spec.type} API ${spec.typeApi}).

## Install

    npm install ${spec.packageName}

Installed next to \`@ssi/cli\` (or dropped into a directory on \`SSI_MODULE_PATH\`), it is found by
name: \`laminfo --param ${spec.type} ${spec.name}\` lists it and its parameters, and
\`--ssi ${selector} ${spec.name}\` selects it.

${spec.type === 'rpi' ? rpiReadme(spec) : exampleReadme(spec)}`;
}

function exampleReadme(spec: PluginSpec): string {
  return `## Parameters

| name | type | default | meaning |
|---|---|---|---|
| \`${spec.type}_${spec.name}_priority\` | int | 10 | selection priority (0-100) |
| \`${spec.type}_${spec.name}_example\` | string | hello | an example parameter |
`;
}
