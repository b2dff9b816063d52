#!/usr/bin/env node
import { lamdMain } from '../lamd/lamd-main';

void lamdMain();
