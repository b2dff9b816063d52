export type { CreateOptions } from './create-plugin';
export { createPlugin } from './create-plugin';
export type { PluginSpec } from './plugin-files';
