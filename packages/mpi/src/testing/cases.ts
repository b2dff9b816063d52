/**
 * The conformance cases of `conformance.js`, after the seed's method (Ch. 5.3.1): every mode and
 * flavour with data checked by the receiver, plus the behaviours that are not about modes. Each
 * runs on any number of ranks >= `minRanks` unless `ranks` pins it.
 */
export const CONFORMANCE_CASES = [
  { name: 'env', minRanks: 1, about: 'init state, thread level, processor name, wtime, COMM_SELF' },
  {
    name: 'modes',
    minRanks: 2,
    about: 'every mode x flavour x size (eager and rendezvous), buffers checked',
  },
  {
    name: 'objects',
    minRanks: 2,
    about: 'msgpackr object tier in every mode x flavour; typed arrays received without a buffer',
  },
  { name: 'unexpected', minRanks: 2, about: 'messages that arrive before their receive is posted' },
  {
    name: 'overtaking',
    minRanks: 2,
    about: 'non-overtaking per (source, tag); other tags may overtake',
  },
  { name: 'wildcards', minRanks: 2, about: 'ANY_SOURCE / ANY_TAG matching and posting order' },
  { name: 'probe', minRanks: 2, about: 'probe / iprobe then receive, for buffers and objects' },
  {
    name: 'cancel',
    minRanks: 2,
    about: 'cancel receives and unmatched sends (eager synchronous, rendezvous, self)',
  },
  {
    name: 'preposted',
    minRanks: 2,
    about: 'long receives posted first: wildcards, cancelled, a smaller one ahead of a larger one',
  },
  { name: 'persistent', minRanks: 2, about: 'persistent requests restarted many times, startall' },
  { name: 'self', minRanks: 1, about: 'send to self in every mode, COMM_SELF' },
  { name: 'sizes', minRanks: 2, about: '0-byte and 16 MB messages' },
  { name: 'sendrecv', minRanks: 2, about: 'sendrecv and sendrecv_replace in a ring' },
  { name: 'completion', minRanks: 2, about: 'wait/test any/all/some' },
  {
    name: 'bsend',
    minRanks: 2,
    about: 'attached buffer space rules, detach waits for transmission',
  },
  { name: 'procnull', minRanks: 1, about: 'PROC_NULL in every call' },
  { name: 'errors', minRanks: 2, about: 'MPI error classes with ERRORS_RETURN' },
  { name: 'stress', minRanks: 2, about: '100k random small messages, checksummed, order checked' },
] as const;

export type ConformanceCase = (typeof CONFORMANCE_CASES)[number]['name'];

/** The names of the conformance cases a job of `np` ranks runs. */
export function conformanceCasesFor(np: number): string[] {
  return CONFORMANCE_CASES.filter((c) => np >= c.minRanks).map((c) => c.name);
}

/**
 * Cases that end the job on purpose; the test checks how (`launchJob(...).abort`). Not part of
 * the conformance run.
 */
export const ENDING_CASES = [
  'abort',
  'fatal-rank',
  'unhandled-rejection',
  'no-finalize',
  'peer-exit',
] as const;
