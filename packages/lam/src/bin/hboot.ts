#!/usr/bin/env node
import { hbootMain } from '../hboot/hboot';

hbootMain().then((code) => {
  process.exitCode = code;
});
