import type { BackendName } from './backends';
import type { Verdict } from './hooks';
import type { ProcessPlace } from './placeholders';

/** The section of a rank file in which the external module records what the checkpointer did. */
export const EXTERNAL_SECTION = 'external';

/** One process's entry of a series: where its image is and how it was made. */
export interface ExternalRecord {
  backend: BackendName;
  place: ProcessPlace;
  /** The checkpoint command as run (generic, criu). */
  command?: string;
  code?: number;
  stderr?: string;
  /** The restart command for this process, placeholders filled in ('' when none was given). */
  restart?: string;
  /** The restart command as given (placeholders open): a restart fills in the new node and host. */
  restartTemplate?: string;
  verdict: Verdict;
  ms: number;
}

export function encodeRecord(record: ExternalRecord): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

/** The record of a rank file, or an error naming the file when it is not one. */
export function decodeRecord(bytes: Uint8Array, where: string): ExternalRecord {
  try {
    const r = JSON.parse(new TextDecoder().decode(bytes)) as ExternalRecord;
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.backend !== 'string' ||
      typeof r.place !== 'object'
    ) {
      throw new Error('not an object with backend and place');
    }
    return r;
  } catch (err) {
    throw new Error(
      `${where}: the external section is not a record of the external module (${(err as Error).message})`,
    );
  }
}
