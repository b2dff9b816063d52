/**
 * Linux CPU lists, as `/proc/<pid>/status` (`Cpus_allowed_list`), `taskset -c` and sysfs write
 * them: `0-3,8,10-11`. Sets are kept as sorted arrays of CPU numbers.
 */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  const trimmed = text.trim();
  if (trimmed === '') return [];
  for (const part of trimmed.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`not a CPU list: "${text}" (expected e.g. 0-3,8)`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`not a CPU list: "${text}" (range ${part} runs backwards)`);
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The shortest list for a set of CPUs: runs become ranges (`[0,1,2,5]` → `0-2,5`). */
export function formatCpuList(cpus: Iterable<number>): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
