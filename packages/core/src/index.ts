// The public surface of @ssi/core: everything each of these files exports, one concept per file.
export * from './agreement';
export * from './context';
export * from './discovery';
export * from './errors';
export * from './framework';
export * from './frameworks';
export * from './loader';
export * from './manifest';
export * from './module';
export * from './param-file';
export * from './params';
export * from './requirements';
export * from './selection';
export * from './ssi-args';
export * from './suggest';
export * from './verbose';
export * from './version';
