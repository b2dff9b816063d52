export { agentArgv, parseAgent, shellQuote } from './agent';
export { classifyOutcome } from './classify';
export { default } from './rsh-module';
