/** @ssi/cr-self: the self checkpoint/restart component (crlam and crmpi halves). */
export { default as crlamSelf } from './crlam';
export { default as crmpiSelf } from './crmpi';
export { CRLAM_SELF_PARAMS } from './params';
