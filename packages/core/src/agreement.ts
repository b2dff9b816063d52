import { SsiError } from './errors';
import { parseVersion, sameModuleVersion } from './version';

/** What one process selected: `{ rpi: { name, version, origin } }`. */
export interface ProcessSelection {
  /** Who: "rank 3 (n1:4711)". */
  who: string;
  modules: Record<string, { name: string; version: string; origin?: string }>;
}

/**
 * Every process of a job must select the same module of each framework, by name and by
 * major.minor (Ch. 3.2.3). Throws a message naming the processes that differ and what each has.
 */
export function checkAgreement(processes: readonly ProcessSelection[]): void {
  const first = processes[0];
  if (!first) return;
  const types = new Set(processes.flatMap((p) => Object.keys(p.modules)));
  for (const type of [...types].sort()) {
    const ref = first.modules[type];
    const differing = processes.filter((p) => {
      const mine = p.modules[type];
      if (!ref || !mine) return ref !== mine;
      return (
        mine.name !== ref.name ||
        !sameModuleVersion(parseVersion(mine.version), parseVersion(ref.version))
      );
    });
    if (differing.length === 0) continue;
    const show = (p: ProcessSelection) => {
      const m = p.modules[type];
      return m
        ? `  ${p.who}: ${m.name} ${m.version}${m.origin ? ` (${m.origin})` : ''}`
        : `  ${p.who}: none`;
    };
    throw new SsiError(
      'DISAGREEMENT',
      `processes disagree on the ${type} module (name and major.minor must match):\n` +
        [first, ...differing].map(show).join('\n') +
        '\nInstall the same module version everywhere, or choose one with --ssi.',
    );
  }
}
