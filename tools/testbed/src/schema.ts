import type { TestHost } from './types';

/** Boot schema lines: `127.0.0.2 cpu=1 <extra>` per host. */
export function renderBootSchema(hosts: TestHost[], perHost?: (h: TestHost) => string): string {
  return hosts
    .map((h) => {
      const extra = perHost?.(h).trim();
      return `${h.address} cpu=1${extra ? ` ${extra}` : ''}\n`;
    })
    .join('');
}
