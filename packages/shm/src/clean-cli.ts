#!/usr/bin/env node
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanStaleSegments } from './cleanup';
import { isShmError } from './errors';
import { currentUser } from './names';

const USAGE = `usage: ssi-shm-clean [--session-dir DIR] [--job ID] [--force] [--dry-run] [--json]

Remove the POSIX shared-memory segments (/dev/shm/ssi-<user>-<hash>-...) that crashed jobs of a
session left behind. A segment still used by a live process is kept unless --force.

  --session-dir DIR  the universe's session directory
                     (default \${TMPDIR:-/tmp}/ssi-<user>@<host>[-$LAM_MPI_SESSION_SUFFIX])
  --job ID           only this job's segments
  --force            also remove segments that live processes still use
  --dry-run          only list what would be removed
  --json             print the result as JSON`;

function defaultSessionDir(): string {
  const suffix = process.env.LAM_MPI_SESSION_SUFFIX;
  const base = `ssi-${currentUser()}@${hostname()}${suffix ? `-${suffix}` : ''}`;
  return join(process.env.TMPDIR || tmpdir(), base);
}

function main(argv: string[]): number {
  let sessionDir: string | undefined;
  let job: string | undefined;
  let force = false;
  let dryRun = false;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--session-dir') sessionDir = value();
    else if (a === '--job') job = value();
    else if (a === '--force') force = true;
    else if (a === '--dry-run') dryRun = true;
    else if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      return 0;
    } else {
      console.error(`ssi-shm-clean: unknown argument "${a}"\n${USAGE}`);
      return 2;
    }
  }
  const result = cleanStaleSegments({
    sessionDir: sessionDir ?? defaultSessionDir(),
    job,
    force,
    dryRun,
  });
  if (json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const verb = dryRun ? 'would remove' : 'removed';
    for (const n of result.removed) console.log(`${verb} /dev/shm/${n}`);
    for (const k of result.kept) console.log(`kept /dev/shm/${k.name}: ${k.reason}`);
    if (result.removed.length === 0 && result.kept.length === 0) console.log('nothing to clean');
  }
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  console.error(
    `ssi-shm-clean: ${isShmError(err) || err instanceof Error ? err.message : String(err)}`,
  );
  process.exitCode = 1;
}
