/** @ssi/coll-tuned: the tuned coll module (today's collective algorithms, chosen by size). */
import tuned from './module';

export { actionsFor } from './actions';
export type { Algorithms, Decisions } from './decisions';
export { ALGORITHM_CHOICES, readDecisions } from './decisions';
export default tuned;
