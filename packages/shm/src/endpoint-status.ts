import { ShmError } from './errors';
import type { ShmSegment } from './segment';

/**
 * Whether an endpoint can still be used: closed, or failed for good (a corrupted record, a dead
 * peer, a broken segment). One object that every part of the endpoint reads and the first part to
 * meet a failure sets, so every later call throws that failure instead of a later symptom.
 */
export class EndpointStatus {
  closed = false;
  failure: Error | null = null;

  constructor(private readonly seg: ShmSegment) {}

  /** Throws what makes the endpoint unusable: closed, failed, or its segment marked broken. */
  checkUsable(): void {
    if (this.closed || this.seg.isClosed) throw new ShmError('CLOSED', 'the endpoint is closed');
    if (this.failure) throw this.failure;
    if (this.seg.isBroken) throw this.broken('is');
  }

  /** The error of a segment marked broken; `verb`: "is" when a call finds it, "was" for a wait. */
  broken(verb: 'is' | 'was'): ShmError {
    return new ShmError(
      'BROKEN',
      `shared segment ${this.seg.name} ${verb} marked broken (a process died holding its pool lock); end the job`,
    );
  }

  /** A record that cannot be right: fails the endpoint for good, and returns the error to throw. */
  corrupt(what: string): ShmError {
    const e = new ShmError(
      'BROKEN',
      `shared segment ${this.seg.name}: ${what}; the segment is corrupted, end the job`,
    );
    this.failure = e;
    return e;
  }
}
