import { SsiError } from './errors';

/** A major.minor.release triple (App. A.6.2). The release number is informational only. */
export interface Version {
  major: number;
  minor: number;
  release: number;
}

const VERSION_RE = /^(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/;

export function parseVersion(text: string, what = 'version'): Version {
  const m = VERSION_RE.exec(String(text).trim());
  if (!m) {
    throw new SsiError(
      'BAD_VERSION',
      `${what} "${text}" is not a version; expected major.minor[.release], e.g. "1.1.0"`,
    );
  }
  return { major: Number(m[1]), minor: Number(m[2]), release: Number(m[3] ?? 0) };
}

export function formatVersion(v: Version, full = true): string {
  return full ? `${v.major}.${v.minor}.${v.release}` : `${v.major}.${v.minor}`;
}

/**
 * Can code written against `wanted` run on a host that implements `host`? Same major, and the
 * module may not need a minor the host does not have (Ch. 3.2.3).
 */
export function isApiCompatible(wanted: Version, host: Version): boolean {
  return wanted.major === host.major && wanted.minor <= host.minor;
}

/** Two copies of one module agree when major and minor match; release is ignored (Ch. 3.2.3). */
export function sameModuleVersion(a: Version, b: Version): boolean {
  return a.major === b.major && a.minor === b.minor;
}
