import type { ParamSpec } from '@ssi/core';

/**
 * The module's parameters (`rpi_crtcp_<name>`), with defaults and help as `laminfo` shows them.
 * Everything about the wire is tcp's: the `rpi_tcp_*` parameters apply to crtcp's connections.
 */
export const params = {
  priority: {
    type: 'int',
    default: 10,
    help: 'Priority of the crtcp rpi module (0-100); below tcp, so it is used only when asked for (--ssi rpi crtcp)',
  },
  drain_timeout: {
    type: 'int',
    default: 60000,
    help: "Milliseconds a checkpoint waits for the peers' byte counts and for every channel to drain before failing (a restart's new connections wait rpi_tcp_connect_timeout)",
  },
} satisfies Record<string, ParamSpec>;
