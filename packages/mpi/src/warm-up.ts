import type { ParamRegistry, VerboseStream } from '@ssi/core';
import type { Communicator } from './comm';
import { ANY_SOURCE } from './constants';

/** The tag of the rehearsal's messages (COMM_SELF carries nothing else during MPI.init). */
const REHEARSAL_TAG = 0;

/**
 * `mpi_base_warm_up` (issue 21): in MPI.init, once the communicators exist, runs the MPI
 * layer's message paths once on `self` (COMM_SELF, not yet the program's): a blocking send then
 * a blocking receive naming the source (the message waits as unexpected), a blocking
 * ANY_SOURCE receive that waits until a send completes it (the wait of the first message's
 * receiver: posted receive, polling window, completion), and `irecv`, `send`, `wait`. The
 * first message between two ranks then runs code that has run before in this process (argument
 * checks, the pooled requests, matching, delivery, completion, the wait's promise plumbing): the
 * first run of that code, with V8's inline caches and feedback still empty, was part of the first
 * message's cost (measured in the README). Sends to self are the MPI layer's own
 * (`SelfChannel`): no rpi, no peer, nothing leaves the process, and nothing is left behind.
 * Not with a crmpi module (checkpoint/restart): its rollback log would see them.
 */
export async function warmUpMessagePaths(
  self: Communicator,
  params: ParamRegistry,
  verbose: VerboseStream,
): Promise<void> {
  if (!params.get<boolean>('mpi_base_warm_up')) return;
  if (self.host.engine.crLog !== null) {
    // A crmpi module logs every message for a rollback, and a restart replays by sequence
    // numbers: messages the program did not send stay out of both.
    verbose.log(10, 'no warm-up of the message paths: a crmpi module is selected');
    return;
  }
  const ball = new Uint8Array(8);
  await self.send(ball, 0, REHEARSAL_TAG);
  await self.recv(ball, 0, REHEARSAL_TAG);
  const waiting = self.recv(ball, ANY_SOURCE, REHEARSAL_TAG);
  await self.send(ball, 0, REHEARSAL_TAG);
  await waiting;
  const posted = self.irecv(ball, 0, REHEARSAL_TAG);
  await self.send(ball, 0, REHEARSAL_TAG);
  await posted.wait();
  verbose.log(
    10,
    'rehearsed the message paths: 3 messages to itself on COMM_SELF (mpi_base_warm_up)',
  );
}
