/** @ssi/coll-lam-basic: the lam_basic coll module (LAM/MPI 7's basic collective algorithms). */
import lamBasic from './module';

export default lamBasic;
