import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliInstallDir } from './cli-context';

export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(join(cliInstallDir(), 'package.json'), 'utf8'));
  return String(pkg.version);
}
