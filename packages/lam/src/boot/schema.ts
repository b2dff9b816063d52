import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { closestName } from '@ssi/core';
import { LamError } from '../errors';
import type { BootNode } from './types';

export interface ParsedSchema {
  nodes: BootNode[];
  /** duplicates folded and similar things the user should hear about */
  warnings: string[];
}

const HOST_RE = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USER_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** The keys the boot base understands; a boot module's own keys are `<module>_<key>`. */
export const BOOT_SCHEMA_KEYS: readonly string[] = [
  'cpu',
  'user',
  'prefix',
  'schedule',
  'hostname',
];

/**
 * Parses a boot schema (App. B.1.7, `bhostparse`): one host per line, then `key=value` words
 * (`cpu=N`, `user=`, `prefix=`, `schedule=yes|no`, and boot modules' own keys, named
 * `<module>_<key>` like parameters and kept in `keyval`), `#` comments. Any other key is an
 * error naming the closest known key (`cpus=2` would otherwise boot one CPU silently). A host
 * listed twice is one node whose CPU counts add up (with a warning). Errors name the file and
 * line; all of them are reported at once.
 */
export function parseBootSchema(text: string, file: string): ParsedSchema {
  const errors: string[] = [];
  const warnings: string[] = [];
  const byName = new Map<string, BootNode>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const at = `${file}:${line}`;
    const words = raw.replace(/#.*$/, '').trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    const parsed = parseLine(words, at, errors);
    if (!parsed) return;
    const previous = byName.get(parsed.name);
    if (!previous) {
      byName.set(parsed.name, { ...parsed, where: { file, line } });
      return;
    }
    fold(previous, parsed, at, errors, warnings);
  });
  if (errors.length === 0 && byName.size === 0) {
    errors.push(`${file}: no hosts (every line is empty or a comment)`);
  }
  if (errors.length > 0) {
    const shown = errors.slice(0, 10);
    if (errors.length > 10) shown.push(`... and ${errors.length - 10} more`);
    throw new LamError('BAD_SCHEMA', `boot schema has errors:\n  ${shown.join('\n  ')}`);
  }
  const nodes = [...byName.values()];
  nodes.forEach((n, i) => {
    n.id = i;
  });
  return { nodes, warnings };
}

function parseLine(words: string[], at: string, errors: string[]): BootNode | undefined {
  const before = errors.length;
  let [host, ...rest] = words as [string, ...string[]];
  if (host.includes('=')) {
    const [key, value] = splitPair(host);
    if (key !== 'hostname' || !value) {
      errors.push(`${at}: a line must start with a host name, not "${host}"`);
      return undefined;
    }
    host = value;
  }
  if (!HOST_RE.test(host)) {
    errors.push(`${at}: "${host}" is not a host name or IPv4 address`);
  }
  const node: BootNode = {
    id: 0,
    name: host,
    address: '',
    cpus: 1,
    schedulable: true,
    boot: true,
    origin: false,
    me: false,
    keyval: { hostname: host },
  };
  for (const word of rest) {
    const [key, value] = splitPair(word);
    if (!word.includes('=') || !KEY_RE.test(key)) {
      errors.push(`${at}: "${word}" is not key=value (e.g. cpu=2, user=alice, schedule=no)`);
      continue;
    }
    if (!BOOT_SCHEMA_KEYS.includes(key) && !key.includes('_')) {
      const near = closestName(key, BOOT_SCHEMA_KEYS);
      errors.push(
        `${at}: unknown key "${key}"${near ? `; did you mean "${near}"?` : ''} (known: ${BOOT_SCHEMA_KEYS.join(', ')}; a boot module's own keys are <module>_<key>)`,
      );
      continue;
    }
    if (value === '') {
      errors.push(`${at}: ${key}= has no value`);
      continue;
    }
    node.keyval[key] = value;
    applyKey(node, key, value, at, errors);
  }
  return errors.length === before ? node : undefined;
}

function applyKey(node: BootNode, key: string, value: string, at: string, errors: string[]): void {
  switch (key) {
    case 'cpu':
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) {
        errors.push(`${at}: cpu=${value} is not a CPU count; expected a whole number >= 1`);
      } else node.cpus = Number(value);
      return;
    case 'user':
      if (!USER_RE.test(value)) errors.push(`${at}: user=${value} is not a login name`);
      else node.user = value;
      return;
    case 'prefix':
      if (!value.startsWith('/')) errors.push(`${at}: prefix=${value} must be an absolute path`);
      else node.prefix = value.replace(/\/+$/, '') || '/';
      return;
    case 'schedule':
      if (value !== 'yes' && value !== 'no')
        errors.push(`${at}: schedule=${value}; expected yes or no`);
      else node.schedulable = value === 'yes';
      return;
    case 'hostname':
      errors.push(`${at}: hostname= may only start a line`);
      return;
    default:
      // Module-specific keys (`<module>_<key>`) stay in keyval (App. B.1.2).
      return;
  }
}

function fold(first: BootNode, again: BootNode, at: string, errors: string[], warnings: string[]) {
  const origin = `line ${first.where!.line}`;
  for (const key of ['user', 'prefix'] as const) {
    if (again[key] !== undefined && again[key] !== first[key]) {
      errors.push(
        `${at}: ${first.name} is listed again with ${key}=${again[key]}, but ${origin} says ${key}=${first[key] ?? '(none)'}`,
      );
      return;
    }
  }
  if ('schedule' in again.keyval && again.schedulable !== first.schedulable) {
    errors.push(`${at}: ${first.name} is listed again with a different schedule= than ${origin}`);
    return;
  }
  first.cpus += again.cpus;
  warnings.push(
    `${at}: ${first.name} is already listed on ${origin}; CPU counts added (now cpu=${first.cpus})`,
  );
}

function splitPair(word: string): [string, string] {
  const i = word.indexOf('=');
  return i < 0 ? [word, ''] : [word.slice(0, i), word.slice(i + 1)];
}

/** Finds and reads a boot schema file (App. B.1.10). */
export function readBootSchema(file: string, cwd = process.cwd()): ParsedSchema {
  const path = resolve(cwd, file);
  if (!existsSync(path)) {
    throw new LamError('BAD_ARGS', `boot schema ${file} not found (looked for ${path})`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new LamError('BAD_ARGS', `cannot read boot schema ${path}: ${(err as Error).message}`);
  }
  return parseBootSchema(text, file);
}

/** The schema when none is given: this host alone, on the loopback address. */
export function defaultSchema(localHost: string): ParsedSchema {
  return {
    nodes: [
      {
        id: 0,
        name: localHost,
        address: '127.0.0.1',
        cpus: 1,
        schedulable: true,
        boot: true,
        origin: false,
        me: false,
        keyval: { hostname: localHost },
      },
    ],
    warnings: [],
  };
}
