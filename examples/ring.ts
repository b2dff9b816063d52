// Ring: a token goes around all ranks a few times; each rank adds one on the way.
//   mpirun -np 4 examples/ring.ts
import { MPI } from '@ssi/mpi';

const ROUNDS = 3;
const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const next = (world.rank + 1) % world.size;
const prev = (world.rank + world.size - 1) % world.size;

if (world.rank === 0) {
  let token = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    await world.send(token, next, 0);
    token = (await world.recv(prev, 0)) as number;
    console.log(`round ${round}: the token came back as ${token}`);
  }
  await world.send(-1, next, 0); // tells everyone to stop
  await world.recv(prev, 0);
} else {
  for (;;) {
    const token = (await world.recv(prev, 0)) as number;
    if (token < 0) {
      await world.send(token, next, 0);
      break;
    }
    await world.send(token + 1, next, 0);
  }
}
await mpi.finalize();
