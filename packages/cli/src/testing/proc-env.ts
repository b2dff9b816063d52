import { readFileSync } from 'node:fs';

/** The environment variable `name` of process `pid` (Linux /proc), or undefined. */
export function envOf(pid: number, name: string): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}
