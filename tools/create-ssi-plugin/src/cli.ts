#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isSsiError } from '@ssi/core';
import { createPlugin } from './create-plugin';

const USAGE = `usage: create-ssi-plugin <dir> --type <boot|rpi|coll|crlam|crmpi> --name <name>
                         [--package-name <npm name>] [--type-api <x.y.z>] [--description <text>]`;

function main(): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    process.stderr.write(`create-ssi-plugin: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [dir] = positionals;
  if (!dir || !values.type || !values.name) {
    process.stderr.write(
      `create-ssi-plugin: a directory, --type and --name are required\n${USAGE}\n`,
    );
    return 2;
  }
  try {
    const { dir: out, spec } = createPlugin({
      dir,
      type: values.type,
      name: values.name,
      packageName: values['package-name'],
      typeApi: values['type-api'],
      description: values.description,
    });
    process.stdout.write(
      `created ${spec.packageName} (${spec.type} module "${spec.name}", ${spec.type} API ${spec.typeApi}) in ${out}\n` +
        `next: cd ${out} && npm pack, then install the tarball next to @ssi/cli\n`,
    );
    return 0;
  } catch (err) {
    if (!isSsiError(err)) throw err;
    process.stderr.write(`create-ssi-plugin: ${err.message}\n`);
    return 2;
  }
}

function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      type: { type: 'string' },
      name: { type: 'string' },
      'package-name': { type: 'string' },
      'type-api': { type: 'string' },
      description: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

process.exitCode = main();
